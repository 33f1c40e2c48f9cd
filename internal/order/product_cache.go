package order

import (
	"context"
	"slices"
	"time"

	"github.com/flashsale/flashsale/internal/stock"
)

// product returns the settings of product id, from the database the first
// time and from the cache after: settings never change once created (only
// the stock, read under the lock). Without the cache every buyer of a rush
// queues for a pooled connection just to learn the lock mode.
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
// the shop's own that the lock wait bounds (a batch, or redis-queue's
// shared round trip), so that the shop's door (package httpapi) lets them
// through. It asks only this process's cache: a product not sold here yet
// has none. Safe for concurrent use.
func (s *Service) HasOwnQueue(_ context.Context, id string) bool {
	v, ok := s.cache.Load(id)
	if !ok {
		return false
	}
	p := v.(stock.Product)
	return p.BatchMax > 0 && p.Strategy.Batches() || p.Strategy.Queues()
}

// soldOut reports whether this process has seen product id's stock at 0
// (markSoldOut): the rest of the rush is answered without touching Redis or
// the database, the "sold-out marker" every flash-sale system keeps.
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
