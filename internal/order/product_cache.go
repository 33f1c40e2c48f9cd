package order

import (
	"context"
	"slices"
	"time"

	"github.com/flashsale/flashsale/internal/stock"
)

// product returns the settings of product id, from the database the first
// time and from the cache after that. A product's settings never change once
// it is created (only its stock does, and buy reads that inside the lock), so
// each process may keep them. Without the cache every buyer of a rush queues
// for a database connection just to learn the lock mode, in the same pool
// queue as the lock holder's statements, and the critical section stretches
// with the crowd.
func (s *Service) product(ctx context.Context, id string) (stock.Product, error) {
	if p, ok := s.cache.Load(id); ok {
		return p.(stock.Product), nil
	}
	p, err := s.products.Get(ctx, id)
	if err != nil {
		return stock.Product{}, err // stock.ErrNotFound, stock.ErrUnavailable, ctx's
	}
	s.cache.Store(id, p)
	return p, nil
}

// HasOwnQueue reports whether the orders of product id wait in a queue of
// the shop's own that the lock wait bounds: a batch's (placeBatched), or a
// shared round trip to Redis (redis-queue's accept). The shop's door
// (package httpapi) lets them through: held there, a batch or a round trip
// could never carry more buyers than the door has slots. It asks only this
// process's cache, never the database: a product not sold here yet has
// none, and its first order goes through the door and loads it. Safe for
// concurrent use.
func (s *Service) HasOwnQueue(_ context.Context, id string) bool {
	v, ok := s.cache.Load(id)
	if !ok {
		return false
	}
	p := v.(stock.Product)
	return p.BatchMax > 0 && p.Strategy.Batches() || p.Strategy.Queues()
}

// soldOut reports whether this process has seen product id's stock at 0.
// Stock never goes up (there is no restocking), so a 0 read under the lock
// is final, and the rest of the rush can be answered without touching Redis
// or the database: the "sold-out marker" every flash-sale system keeps.
// Each process learns it on its own, from its own locked read.
func (s *Service) soldOut(id string) bool {
	_, ok := s.soldOutSeen.Load(id)
	return ok
}

// markSoldOut remembers that product id's stock was seen at 0, unless it
// has a pay window: then an expired or cancelled order puts units back,
// and 0 is not final.
func (s *Service) markSoldOut(id string) {
	if p, ok := s.cache.Load(id); ok && p.(stock.Product).PayWithin > 0 {
		return
	}
	s.soldOutSeen.Store(id, struct{}{})
}

// Recent returns the products this process has sold (or been asked to
// sell) that were created within the last hour, newest first, at most n:
// the products under test, whose audits the metrics show.
func (s *Service) Recent(n int) []stock.Product {
	var ps []stock.Product
	since := time.Now().Add(-time.Hour)
	s.cache.Range(func(_, v any) bool {
		if p := v.(stock.Product); p.CreatedAt.After(since) {
			ps = append(ps, p)
		}
		return true
	})
	slices.SortFunc(ps, func(a, b stock.Product) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return ps[:min(n, len(ps))]
}
