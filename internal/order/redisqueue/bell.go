package redisqueue

import "sync"

// The bell: how a shop's consumer learns that its product's stream has
// new entries without parking a connection on Redis. A blocking
// XREADGROUP per product would do it, but it holds a connection per
// product and writer for as long as it waits, so a shop selling twenty
// products would keep forty reads parked on Redis, and an embedded
// miniredis wakes every parked read on every command it runs (each
// re-check rescanning every key for TTLs): its cost grew with the square
// of the products. Instead the shop that queued an order rings its own
// consumer of the product when the accept's trip comes back, and a
// consumer nobody rings looks at its stream every pollEvery: the orders
// another shop queued and left (it died, or its writers are busy) wait at
// most that long. So the reads a shop sends grow with what it sells, not
// with the products it consumes.

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
