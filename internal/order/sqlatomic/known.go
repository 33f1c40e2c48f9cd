package sqlatomic

import "sync"

// known is what one Seller has learnt of a product's buckets: for each, the
// smallest quantity a conditional UPDATE found it short of (0: never). A
// bucket short of q stays so, and is skipped: the sale's end costs one
// round trip per bucket per shop, not per buyer. Safe for concurrent use.
type known struct {
	mu    sync.Mutex
	below []int
}

// short reports whether bucket b was found with fewer than q units.
func (kn *known) short(b, q int) bool {
	kn.mu.Lock()
	defer kn.mu.Unlock()
	return kn.below[b] > 0 && q >= kn.below[b]
}

// mark records that bucket b was found with fewer than q units.
func (kn *known) mark(b, q int) {
	kn.mu.Lock()
	defer kn.mu.Unlock()
	if kn.below[b] == 0 || q < kn.below[b] {
		kn.below[b] = q
	}
}

// empty reports whether every bucket was found without a single unit.
func (kn *known) empty() bool {
	kn.mu.Lock()
	defer kn.mu.Unlock()
	for _, q := range kn.below {
		if q != 1 {
			return false
		}
	}
	return true
}
