package redisstock

import "strconv"

// A hot product's stock may be split over K buckets (stock.Product.Buckets,
// package redisdecr sells them), each a stock of its own in Redis: its
// stock, buyers, ledger, given-back marks and sweep turn, under a hash tag
// of its own, so that each bucket may sit on another master of a Redis
// Cluster. Every method of Stock takes a bucket's name (Bucket) where it
// takes a product, and then works on that bucket alone.
//
// A Cluster puts a key on the master that owns its tag's slot, CRC16 of
// the tag modulo 16384. Bucket chooses each bucket's tag so that its slot
// lies in the middle of the bucket's share of the slot space: bucket b of
// K in the middle quarter of slots [b·16384/K, (b+1)·16384/K). A cluster
// whose masters own equal runs of slots, as `redis-cli --cluster create`
// deals them, then has the K buckets of K ≤ masters on K different
// masters (3 buckets on 3 masters: slots near 2,700, 8,200 and 13,650).
// A cluster laid out otherwise still works, the buckets only share masters.

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// Bucket is the name under which bucket b (0..k-1) of product's k buckets
// is kept: "<product>~b<b>.<n>", with the smallest n ≥ 0 that puts the name's
// slot (Slot) in the middle quarter of the bucket's share of the slots.
// The '~' no product id may hold (stock.ValidID) keeps bucket names apart
// from products. It is a pure function of its arguments: every shop
// computes the same names.
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
