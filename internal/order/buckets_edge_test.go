package order_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestBucketsLastUnitsRace: every bucket holds one unit; many
// buyers homed on each bucket rush over three shops at once. Exactly K
// orders, every other buyer sold out, and no sold-out answer while a
// unit was left (each refused buyer's answer ended after the last
// order's start: checked through the audit, which must show 0 left).
func TestBucketsLastUnitsRace(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		const k = 8
		shops := newShops(t, b, 3, order.Options{})
		for round := range 5 {
			p := newProduct(t, b, "rv-last", stock.Product{Strategy: strategy.SQLAtomic, Stock: k, Buckets: k})
			var reqs []order.Request
			for h := range k {
				for _, u := range homedAt(h, k, 6) {
					reqs = append(reqs, order.Request{UserID: u + "-" + p.ID, ProductID: p.ID, Quantity: 1})
				}
			}
			out := rush(t, shops, reqs)
			if got := out.ok.Load(); got != k {
				t.Errorf("round %d: orders %d, want %d (sold out %d)", round, got, k, out.soldOut.Load())
			}
			checkBuckets(t, audit(t, shops[0], p.ID), k, k)
		}
	})
}

// TestBucketsTwoClicksTwoBuckets: a buyer's two clicks start at
// once on two shops; the home bucket is empty in one shop's eyes only
// (it learnt so), so the clicks go to different buckets at the same
// time. One order.
func TestBucketsTwoClicksTwoBuckets(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		const k = 4
		ctx := context.Background()
		for round := range 20 {
			shops := newShops(t, b, 2, order.Options{})
			// 3 units over 4 buckets: bucket 3 is empty.
			p := newProduct(t, b, "rv-2clicks", stock.Product{Strategy: strategy.SQLAtomic, Stock: 3, Buckets: k})
			// shop 0 learns bucket 3 is empty; shop 1 does not.
			hs := homedAt(3, k, 2)
			learner, u := hs[1], hs[0]
			mustPlace(ctx, t, shops[0], p.ID, learner)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := make(chan struct{})
			for i := range 2 {
				wg.Go(func() {
					<-start
					_, errs[i] = shops[i].Place(ctx, order.Request{UserID: u, ProductID: p.ID, Quantity: 1})
				})
			}
			close(start)
			wg.Wait()
			okN := 0
			for _, err := range errs {
				if err == nil {
					okN++
				} else if !errors.Is(err, order.ErrDuplicateOrder) && !errors.Is(err, order.ErrDuplicateRequest) {
					t.Errorf("round %d: a click: %v", round, err)
				}
			}
			if okN != 1 {
				t.Errorf("round %d: %d orders for one buyer (%v)", round, okN, errs)
			}
			checkBuckets(t, audit(t, shops[0], p.ID), k, 2)
		}
	})
}

// TestBucketsQuantityTwo: buyers of 2 and of 1 mixed, on buckets
// holding 1 each after a first round: the buyer of 1 still buys after
// buyers of 2 were refused everywhere.
func TestBucketsQuantityTwo(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shops := newShops(t, b, 1, order.Options{})
		p := newProduct(t, b, "rv-qty", stock.Product{Strategy: strategy.SQLAtomic, Stock: 4, Buckets: 4})
		if _, err := shops[0].Place(ctx, order.Request{UserID: "two", ProductID: p.ID, Quantity: 2}); !errors.Is(err, order.ErrSoldOut) {
			t.Fatalf("2 of 4 buckets of 1: got %v, want sold out", err)
		}
		for i := range 4 {
			if _, err := shops[0].Place(ctx, order.Request{UserID: "one" + string(rune('a'+i)), ProductID: p.ID, Quantity: 1}); err != nil {
				t.Errorf("buyer of 1, %d left: %v", 4-i, err)
			}
		}
		if _, err := shops[0].Place(ctx, order.Request{UserID: "late", ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrSoldOut) {
			t.Errorf("late: got %v, want sold out", err)
		}
		checkBuckets(t, audit(t, shops[0], p.ID), 4, 4)
	})
}
