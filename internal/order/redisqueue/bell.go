package redisqueue

import "sync"

// The bell: how a shop's consumer learns of new entries without parking a
// blocking XREADGROUP per product and writer on Redis. The shop that queued
// an order rings its own consumer of the product when the trip comes back;
// a consumer nobody rings reads every pollEvery, so the orders another shop
// queued and left wait at most that long. A shop's reads grow with what it
// sells, not with the products it consumes.

// bells is the products' bells a Queue rings, one ringer per open
// Consumers built on it. The zero value is ready; it is safe for
// concurrent use.
type bells struct {
	mu      sync.Mutex
	ringers []*ringer // replaced, never changed in place: ring reads a copy
}

// ringer is one Consumers' ring.
type ringer struct{ ring func(product string) }

// add makes ring hear every product whose order this Queue accepted,
// until the returned remove is called (Consumers.Close does).
func (b *bells) add(ring func(product string)) (remove func()) {
	r := &ringer{ring: ring}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ringers = append(b.ringers[:len(b.ringers):len(b.ringers)], r)
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		kept := make([]*ringer, 0, len(b.ringers))
		for _, o := range b.ringers {
			if o != r {
				kept = append(kept, o)
			}
		}
		b.ringers = kept
	}
}

// ring rings each of products once (they may repeat).
func (b *bells) ring(products []string) {
	if len(products) == 0 {
		return
	}
	b.mu.Lock()
	ringers := b.ringers
	b.mu.Unlock()
	seen := make(map[string]bool, len(products))
	for _, p := range products {
		if seen[p] {
			continue
		}
		seen[p] = true
		for _, r := range ringers {
			r.ring(p)
		}
	}
}
