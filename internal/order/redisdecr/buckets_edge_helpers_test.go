package redisdecr

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/flashsale/flashsale/internal/stock"
)

// The helpers of the cold review's bucket tests (review_buckets_test.go).

// gate is an Options.Work that holds its first n orders (armed) until
// release is closed or the order's ctx ends, telling arrived of each.
type gate struct {
	armed   atomic.Int64
	arrived chan struct{}
	release chan struct{}
}

func newGate(n int) *gate {
	g := &gate{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	g.armed.Store(int64(n))
	return g
}

func (g *gate) Work(ctx context.Context, _ stock.Product) error {
	if g.armed.Add(-1) >= 0 {
		g.arrived <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
		}
	}
	return ctx.Err()
}

// held places one unit of p for user in s, whose Work is a gate, on a
// context of its own, and returns once the order is held at the gate: leave
// ends that context, answer gives the order's answer.
func held(ctx context.Context, s *shop, g *gate, p stock.Product, user string) (leave func(), answer chan error) {
	cctx, cancel := context.WithCancel(ctx)
	answer = make(chan error, 1)
	go func() { answer <- s.place(cctx, p, user) }()
	select {
	case <-g.arrived:
	case err := <-answer:
		answer <- err
	}
	return cancel, answer
}

// agree checks that p's buckets agree in the database and in Redis and
// sum to the product's stock, and returns them.
func (e bucketEnv) agree(ctx context.Context, t *testing.T, p stock.Product) []int {
	t.Helper()
	db, rs := e.buckets(ctx, t, p)
	total := 0
	for _, n := range db {
		total += n
	}
	if !slices.Equal(db, rs) {
		t.Errorf("buckets: database %v, Redis %v; want them equal", db, rs)
	}
	if got := stockOf(ctx, t, e.db, p.ID); got != total {
		t.Errorf("the product's stock %d, the buckets' sum %d", got, total)
	}
	return db
}
