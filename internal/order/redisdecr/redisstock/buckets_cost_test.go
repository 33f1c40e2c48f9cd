package redisstock

import "testing"

// BenchmarkBucketNames256 is the cost of naming every bucket of a product
// of MaxBuckets (256) buckets, as the sweep, the audit and a sold-out
// answer that tried every bucket (nameOf per try) each do.
func BenchmarkBucketNames256(b *testing.B) {
	for b.Loop() {
		Buckets("a-product-id-of-some-length:0123456789", 256)
	}
}

// BenchmarkBucketName3 is one bucket name of 3, as each take does.
func BenchmarkBucketName3(b *testing.B) {
	for b.Loop() {
		Bucket("a-product-id-of-some-length:0123456789", 2, 3)
	}
}
