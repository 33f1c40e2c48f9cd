package order_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The return of a Redis row's unpaid order: its unit back in the
// database and in Redis, once each, through races and crashes.

// redisRows are the rows whose stock lives in Redis too.
var redisRows = []struct {
	name string
	p    stock.Product
}{
	{"redis-decr", stock.Product{Strategy: strategy.RedisDecr}},
	{"redis-decr+k4", stock.Product{Strategy: strategy.RedisDecr, Buckets: 4}},
	{"redis-queue", stock.Product{Strategy: strategy.RedisQueue}},
}

// placeWritten places one unit of p for user and waits until the order
// is written (a redis-queue order is queued first).
func placeWritten(ctx context.Context, t *testing.T, shop *order.Service, p stock.Product, user string) order.Order {
	t.Helper()
	o := place(ctx, t, shop, p, user)
	testenv.WaitFor(t, 20*time.Second, "the order to be written", func() bool {
		return stateOf(ctx, t, shop, o.ID).Status == order.StatusCreated
	})
	return o
}

// checkStores fails t unless p's stock is want in the database and in
// Redis, bucket by bucket for a bucketed product, with nothing owed.
func checkStores(ctx context.Context, t *testing.T, b *testenv.Env, shop *order.Service, p stock.Product, want int) {
	t.Helper()
	a := auditOf(ctx, t, shop, p)
	if a.Stock != want {
		t.Errorf("database stock %d, want %d", a.Stock, want)
	}
	if a.RedisStock == nil || *a.RedisStock != want || a.Drift != 0 {
		t.Errorf("redis stock %v (drift %d, %s), want %d", a.RedisStock, a.Drift, a.RedisErr, want)
	}
	res := redisstock.New(b.Single(b.Redis.Clients()))
	for _, ba := range a.Buckets {
		left, err := res.Left(ctx, redisstock.Bucket(p.ID, ba.Bucket, p.Buckets))
		if err != nil || left != ba.Stock {
			t.Errorf("bucket %d: redis %d, %v; database %d", ba.Bucket, left, err, ba.Stock)
		}
	}
	if n := owed(t, b); n != 0 {
		t.Errorf("%d returns owed to redis, want 0", n)
	}
}

// owed counts the returns owed to Redis and not yet paid.
func owed(t *testing.T, b *testenv.Env) int {
	t.Helper()
	var n int
	if err := b.DB.DB().Raw("SELECT COUNT(*) FROM redis_owed WHERE paid_ms IS NULL").Row().Scan(&n); err != nil {
		t.Fatalf("count redis_owed: %v", err)
	}
	return n
}

// TestRedisReturn: a cancel and an expiry each put the unit back in both
// stores once, the buyer may buy again, and a queued order's status says
// how it ended.
func TestRedisReturn(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{SweepEvery: 20 * time.Millisecond})[0]
		for _, row := range redisRows {
			t.Run(row.name, func(t *testing.T) {
				t.Run("cancel", func(t *testing.T) {
					p := payable(t, b, row.p, 4, time.Minute)
					o := placeWritten(ctx, t, shop, p, "u1")
					placeWritten(ctx, t, shop, p, "u2")
					if st := stateOf(ctx, t, shop, o.ID); st.State != life.Pending || st.Deadline.IsZero() {
						t.Fatalf("written: %q, deadline %v; want pending with a deadline", st.State, st.Deadline)
					}
					checkStores(ctx, t, b, shop, p, 2)
					for i := range 3 {
						if st, err := shop.Cancel(ctx, o.ID); err != nil || st.State != life.Cancelled {
							t.Fatalf("Cancel #%d: %v, %q", i+1, err, st.State)
						}
					}
					checkStores(ctx, t, b, shop, p, 3)
					if got := shop.Events(p.ID).Returned; got != 1 {
						t.Errorf("returned %d, want 1", got)
					}
					again := placeWritten(ctx, t, shop, p, "u1") // buys again
					if _, err := shop.Place(ctx, order.Request{UserID: "u1", ProductID: p.ID, Quantity: 1}); !isDuplicate(err) {
						t.Errorf("u1's second click after buying again: %v, want a duplicate", err)
					}
					checkStores(ctx, t, b, shop, p, 2)
					if st := stateOf(ctx, t, shop, again.ID); st.State != life.Pending {
						t.Errorf("u1's new order: %q, want pending", st.State)
					}
				})
				t.Run("expiry", func(t *testing.T) {
					p := payable(t, b, row.p, 4, 100*time.Millisecond)
					o := placeWritten(ctx, t, shop, p, "u1")
					testenv.WaitFor(t, 20*time.Second, "the sweep to expire the order", func() bool {
						return stateOf(ctx, t, shop, o.ID).State == life.Expired && owed(t, b) == 0
					})
					checkStores(ctx, t, b, shop, p, 4)
					if _, err := shop.Cancel(ctx, o.ID); !errors.Is(err, order.ErrExpired) {
						t.Errorf("Cancel after expiry: %v, want ErrExpired", err)
					}
					if _, err := shop.Sweep(ctx); err != nil {
						t.Errorf("Sweep: %v", err)
					}
					checkStores(ctx, t, b, shop, p, 4)
					again := placeWritten(ctx, t, shop, p, "u1")
					if _, err := shop.Pay(ctx, again.ID); err != nil {
						t.Errorf("Pay the new order: %v", err)
					}
					checkStores(ctx, t, b, shop, p, 3)
				})
			})
		}
	})
}

// isDuplicate reports whether err refuses a buyer who has an order.
func isDuplicate(err error) bool {
	var dup *order.DuplicateOrderError
	return errors.As(err, &dup) || errors.Is(err, order.ErrDuplicateRequest)
}

// TestRedisReturnRace: cancels from three shops and their sweeps race
// for each due order: each unit comes back once, in both stores.
func TestRedisReturnRace(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shops := newShops(t, b, 3, order.Options{SweepEvery: -1})
		for _, row := range redisRows {
			t.Run(row.name, func(t *testing.T) {
				const units, orders = 8, 5
				p := payable(t, b, row.p, units, 150*time.Millisecond)
				placed := make([]order.Order, orders)
				for i := range placed {
					placed[i] = placeWritten(ctx, t, shops[i%3], p, "u"+string(rune('a'+i)))
				}
				waitDue(ctx, t, b, shops[0], placed...)
				errs := make(chan error, 3*orders*2)
				var wg sync.WaitGroup
				for _, shop := range shops {
					for _, o := range placed {
						wg.Go(func() {
							if _, err := shop.Cancel(ctx, o.ID); err != nil && !errors.Is(err, order.ErrExpired) {
								errs <- err
							}
						})
					}
					wg.Go(func() {
						if _, err := shop.Sweep(ctx); err != nil {
							errs <- err
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("a return: %v", err)
				}
				checkStores(ctx, t, b, shops[0], p, units)
				var returned int64
				for _, shop := range shops {
					returned += shop.Events(p.ID).Returned
				}
				if returned != orders {
					t.Errorf("returned %d, want %d", returned, orders)
				}
			})
		}
	})
}

// TestRedisReturnCrashFinishedBySweep: a shop that dies between a
// return's commit and Redis leaves it owed; another shop's sweep pays it,
// once, however often it runs.
func TestRedisReturnCrashFinishedBySweep(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shops := newShops(t, b, 2, order.Options{SweepEvery: -1})
		dying, alive := shops[0], shops[1]
		order.CrashAfterReturnCommit(dying)
		order.PayOwedAfter(alive, 0) // the test sweeps once it checked the owed row
		for _, row := range redisRows {
			t.Run(row.name, func(t *testing.T) {
				p := payable(t, b, row.p, 3, time.Minute)
				o := placeWritten(ctx, t, alive, p, "u1")
				if _, err := dying.Cancel(ctx, o.ID); err != nil {
					t.Fatalf("Cancel: %v", err)
				}
				a := auditOf(ctx, t, alive, p)
				if a.Stock != 3 || a.RedisStock == nil || *a.RedisStock != 2 || owed(t, b) != 1 {
					t.Fatalf("after the crash: database %d, redis %v, owed %d; want 3, 2, 1", a.Stock, a.RedisStock, owed(t, b))
				}
				if _, err := alive.Place(ctx, order.Request{UserID: "u1", ProductID: p.ID, Quantity: 1}); err == nil {
					t.Errorf("u1 bought again before Redis had the return")
				}
				testenv.WaitFor(t, 20*time.Second, "a sweep to pay what is owed", func() bool {
					if _, err := alive.Sweep(ctx); err != nil {
						t.Fatalf("Sweep: %v", err)
					}
					return owed(t, b) == 0
				})
				for range 3 {
					if _, err := alive.Sweep(ctx); err != nil {
						t.Fatalf("Sweep: %v", err)
					}
				}
				checkStores(ctx, t, b, alive, p, 3)
				placeWritten(ctx, t, alive, p, "u1")
				checkStores(ctx, t, b, alive, p, 2)
			})
		}
	})
}
