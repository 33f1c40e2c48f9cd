package redisstock

import "strconv"

// A hot product's stock may be split over K buckets (stock.Product.Buckets),
// each a stock of its own under its own hash tag, so each may sit on
// another Cluster master; every Stock method takes a bucket's name where it
// takes a product. Bucket puts bucket b's slot in the middle quarter of
// slots [b·16384/K, (b+1)·16384/K), so a cluster dealt in equal runs
// (redis-cli --cluster create) has K ≤ masters buckets on K masters.

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// Bucket is the name of bucket b (0..k-1) of product's k buckets:
// "<product>~b<b>.<n>", with the smallest n that puts its Slot in the
// middle quarter of the bucket's share ('~' is in no product id). Every
// shop computes the same names.
func Bucket(product string, b, k int) string {
	lo, hi := b*Slots/k, (b+1)*Slots/k
	width := max((hi-lo)/4, 1)
	from := lo + (hi-lo-width)/2
	base := product + "~b" + strconv.Itoa(b) + "."
	for n := 0; ; n++ {
		name := base + strconv.Itoa(n)
		if s := Slot(name); s >= from && s < from+width {
			return name
		}
	}
}

// Buckets returns the names of product's k buckets, in bucket order.
func Buckets(product string, k int) []string {
	out := make([]string, k)
	for b := range out {
		out[b] = Bucket(product, b, k)
	}
	return out
}

// Slot is the Redis Cluster slot of a key whose hash tag is tag (every
// key of a product, or of a bucket, has its name as tag): CRC16-XMODEM of
// tag, modulo Slots, as Redis computes it.
func Slot(tag string) int {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % Slots
}
