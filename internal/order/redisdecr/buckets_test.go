package redisdecr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// Tests of redis-decr over stock buckets (buckets.go), each on one Redis
// and on the Redis Cluster (eachRedis). Drop the fallback (try the home
// bucket only) and TestBucketsFallBack, TestBucketsOneOrderPerBuyer and
// TestBucketsReclaimToItsBucket fail; give back to the product's stock
// rather than the bucket's and the last two do.

// TestBucketsSellExactly: two shops, three buckets, twice as many buyers
// as units, each clicking twice at once. Every unit sells, once, to
// different buyers; every bucket ends at 0 in Redis and in the database,
// its orders accounting for its share; nobody is told sold out before the
// last unit is gone (every buyer past the stock is, and only they).
func TestBucketsSellExactly(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		const units, k = 30, 3
		p := e.addBucketed(ctx, t, "exact", units, k)
		shops := []*shop{e.shop(t, Options{}), e.shop(t, Options{})}
		var sold, soldOut, dup atomic.Int64
		errs := make(chan error, 4*units)
		var wg sync.WaitGroup
		for i := range 2 * units {
			for click := range 2 {
				wg.Go(func() {
					err := shops[(i+click)%2].place(ctx, p, fmt.Sprint("u", i))
					var d *orderdb.DuplicateOrderError
					switch {
					case err == nil:
						sold.Add(1)
					case errors.Is(err, stock.ErrSoldOut):
						soldOut.Add(1)
					case errors.As(err, &d), errors.Is(err, orderdb.ErrDuplicateRequest):
						dup.Add(1)
					default:
						errs <- err
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("a buyer: %v", err)
		}
		if sold.Load() != units {
			t.Errorf("sold %d, want %d (%d sold out, %d duplicates)", sold.Load(), units, soldOut.Load(), dup.Load())
		}
		var buyers int64
		if err := e.db.Raw("SELECT COUNT(DISTINCT user_id) FROM orders WHERE product_id = ?", p.ID).Row().Scan(&buyers); err != nil {
			t.Fatal(err)
		}
		if buyers != units {
			t.Errorf("%d buyers hold the %d orders, want one order each", buyers, units)
		}
		e.checkBuckets(ctx, t, p, []int{0, 0, 0})
	})
}

// TestBucketsFallBack: three buckets of one unit each, and three buyers
// whose home is bucket 0. The first empties it; the other two fall back
// and buy the units of buckets 1 and 2. Only then is a fourth told sold
// out. Without the fallback, two of the three would be told sold out
// while two units were left.
func TestBucketsFallBack(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		p := e.addBucketed(ctx, t, "fallback", 3, 3)
		s := e.shop(t, Options{})
		buyers := homed("u", 3, 0, 4)
		for _, u := range buyers[:3] {
			s.mustPlace(ctx, t, p, u)
		}
		if err := s.place(ctx, p, buyers[3]); !errors.Is(err, stock.ErrSoldOut) {
			t.Errorf("a fourth buyer: got %v, want %v", err, stock.ErrSoldOut)
		}
		e.checkBuckets(ctx, t, p, []int{0, 0, 0})
	})
}

// TestBucketsOneOrderPerBuyer: two buckets of one unit. d, whose home is
// bucket 0, reserves its unit and is held in its work; c, of the same
// home, finds bucket 0 empty and buys bucket 1's unit. d leaves: its unit
// goes back to bucket 0, not to 1. c clicks again: bucket 0 has a unit and
// has never seen c, so Redis reserves it, and the database's unique key
// refuses the order. c is told duplicate, naming the order it has, and the
// unit goes back to bucket 0, where e, whose home is bucket 1, finds it.
func TestBucketsOneOrderPerBuyer(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		p := e.addBucketed(ctx, t, "one-each", 2, 2)
		held := make(chan struct{})
		h := &hookWork{hook: func(ctx context.Context) { close(held); <-ctx.Done() }}
		slow, s := e.shop(t, Options{Work: h.Work}), e.shop(t, Options{})
		zero := homed("u", 2, 0, 2)
		d, c, last := zero[0], zero[1], homed("v", 2, 1, 1)[0]

		h.armed.Store(true)
		dctx, leave := context.WithCancel(ctx)
		answer := make(chan error, 1)
		go func() { answer <- slow.place(dctx, p, d) }()
		<-held
		s.mustPlace(ctx, t, p, c) // bucket 1's unit
		leave()
		if err := <-answer; !errors.Is(err, context.Canceled) {
			t.Fatalf("d, who left: got %v, want %v", err, context.Canceled)
		}
		if db, rs := e.buckets(ctx, t, p); rs[0] != 1 || rs[1] != 0 || db[0] != 1 || db[1] != 0 {
			t.Fatalf("after d left: database %v, Redis %v; want [1 0] in both", db, rs)
		}

		var dup *orderdb.DuplicateOrderError
		if err := s.place(ctx, p, c); !errors.As(err, &dup) || dup.OrderID == "" {
			t.Errorf("c again: got %v, want a duplicate naming c's order", err)
		}
		if n := ordersOf(ctx, t, e.db, p.ID, c); n != 1 {
			t.Errorf("c has %d orders, want 1", n)
		}
		if got := s.givenBack.Load() + slow.givenBack.Load(); got != 2 {
			t.Errorf("given back %d, want 2 (d's, c's second)", got)
		}
		e.checkBuckets(ctx, t, p, []int{1, 0})
		s.mustPlace(ctx, t, p, last) // falls back to bucket 0
		e.checkBuckets(ctx, t, p, []int{0, 0})
	})
}

// TestBucketsReclaimToItsBucket: a shop dies between its take and its
// write, the take in the buyer's fallback bucket (its home was empty). A
// restarted shop, asked for the product, sweeps the bucket's ledger and
// gives the unit back to that bucket, where the next buyer finds it.
func TestBucketsReclaimToItsBucket(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		p := e.addBucketed(ctx, t, "reclaim", 2, 2)
		first := e.shop(t, Options{})
		zero := homed("u", 2, 0, 3)
		first.mustPlace(ctx, t, p, zero[0]) // bucket 0's unit
		first.Close()
		e.dieAfterTakeIn(ctx, t, 0, p, zero[1]) // bucket 1's, due at once
		if db, rs := e.buckets(ctx, t, p); rs[0] != 0 || rs[1] != 0 || db[0] != 0 || db[1] != 1 {
			t.Fatalf("after the crash: database %v, Redis %v; want [0 1], [0 0]", db, rs)
		}

		restarted := e.shop(t, Options{})
		if err := restarted.place(ctx, p, zero[2]); !errors.Is(err, stock.ErrSoldOut) {
			t.Fatalf("a buyer while the dead shop holds the unit: got %v, want %v", err, stock.ErrSoldOut)
		}
		testenv.WaitFor(t, 3*sweepEvery, "the sweep to give the unit back to bucket 1", func() bool {
			return restarted.reclaimed.Load() == 1
		})
		e.checkBuckets(ctx, t, p, []int{0, 1})
		restarted.mustPlace(ctx, t, p, zero[2])
		e.checkBuckets(ctx, t, p, []int{0, 0})
	})
}
