package order_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// batching lists the strategies that batch.
var batching = []strategy.Name{strategy.Lua, strategy.Redlock, strategy.Fenced, strategy.Etcd}

// TestBatchedSellsExactly: batched, each locking strategy sells exactly the
// stock to 500 buyers over three shops, with no duplicate order, and the
// shops did serve several buyers per batch.
func TestBatchedSellsExactly(t *testing.T) {
	const buyerCount, units = 500, 50
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t)
		for _, name := range batching {
			t.Run(string(name), func(t *testing.T) {
				shops := newShops(t, b, 3, order.Options{LockWait: 30 * time.Second})
				p := newProduct(t, b, "batched-"+string(name), stock.Product{Strategy: name, Stock: units,
					LockTTL: 2 * time.Second, Work: time.Millisecond, BatchMax: 16})

				out := rush(t, shops, buyers(p.ID, buyerCount))

				if got := out.ok.Load(); got != units {
					t.Errorf("orders placed: got %d, want %d", got, units)
				}
				if got := out.soldOut.Load(); got != buyerCount-units {
					t.Errorf("sold out answers: got %d, want %d", got, buyerCount-units)
				}
				checkExact(t, audit(t, shops[0], p.ID), order.Audit{ProductID: p.ID, Strategy: name,
					InitialStock: units, Stock: 0, Orders: units, Sold: units, Consistent: true})
				var batches, served int64
				for _, s := range shops {
					batches += s.Events(p.ID).Batches
					served += s.Events(p.ID).BatchedBuyers
				}
				t.Logf("%d buyers answered in %d batches", served, batches)
				if batches == 0 || served <= batches {
					t.Errorf("%d buyers answered in %d batches: no batch served more than one", served, batches)
				}
			})
		}
	})
}

// queueBatch holds p's product lock from outside the shop, starts one Place
// per request on shop, waits until they have queued behind the lock, then
// releases it: the shop's leader takes them all into one batch. A request
// whose context (ctxs[i], if ctxs is not nil) can end plays a buyer who
// gives up while queued: it is waited for until its Place has returned. It
// returns each request's error, in order.
func queueBatch(t *testing.T, b *testenv.Env, shop *order.Service, p stock.Product, reqs []order.Request, ctxs []context.Context) []error {
	t.Helper()
	locker := productLocker(t, b, p.Strategy)
	defer locker.Close()
	ctx := context.Background()
	held, err := locker.Lock(ctx, order.ProductKey(p.ID), 10*time.Second, 5*time.Second)
	if err != nil {
		t.Fatalf("hold the product lock: %v", err)
	}
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	stay := 0 // buyers who wait in the queue until the lock comes
	var gaveUp atomic.Int64
	for i, req := range reqs {
		c := ctx
		if ctxs != nil {
			c = ctxs[i]
		}
		leaves := c.Done() != nil
		if !leaves {
			stay++
		}
		wg.Go(func() {
			_, errs[i] = shop.Place(c, req)
			if leaves {
				gaveUp.Add(1)
			}
		})
	}
	testenv.WaitFor(t, 10*time.Second, "the buyers to queue behind the held lock", func() bool {
		return shop.Queued(p.ID) == stay && int(gaveUp.Load()) == len(reqs)-stay
	})
	if err := held.Release(ctx); err != nil {
		t.Fatalf("release the product lock: %v", err)
	}
	wg.Wait()
	return errs
}

// TestBatchRepeatedClicks: ten clicks of one buyer in one batch make one
// order; the other nine are told duplicate_order.
func TestBatchRepeatedClicks(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t)
		for _, name := range batching {
			t.Run(string(name), func(t *testing.T) {
				shop := newShops(t, b, 1, order.Options{})[0]
				p := newProduct(t, b, "batch-clicks-"+string(name), stock.Product{Strategy: name, Stock: 5, BatchMax: 32})
				errs := queueBatch(t, b, shop, p, clicks(p.ID, "x", 10), nil)
				ok, dup := 0, 0
				for _, err := range errs {
					switch {
					case err == nil:
						ok++
					case errors.Is(err, order.ErrDuplicateOrder):
						dup++
					default:
						t.Errorf("click: %v", err)
					}
				}
				if ok != 1 || dup != 9 {
					t.Errorf("10 clicks: %d orders, %d duplicate_order; want 1 and 9", ok, dup)
				}
				if e := shop.Events(p.ID); e.Batches != 1 || e.BatchedBuyers != 10 {
					t.Errorf("served in %d batches, %d buyers; want the 10 clicks in 1", e.Batches, e.BatchedBuyers)
				}
				checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: name,
					InitialStock: 5, Stock: 4, Orders: 1, Sold: 1, Consistent: true})
			})
		}
	})
}

// TestBatchSoldOutInArrivalOrder: a batch allocates in arrival order until
// the stock runs out; the rest are told sold_out.
func TestBatchSoldOutInArrivalOrder(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "batch-soldout", stock.Product{Strategy: strategy.Fenced, Stock: 3, BatchMax: 32})
		errs := queueBatch(t, b, shop, p, buyers(p.ID, 8), nil)
		ok, soldOut := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, order.ErrSoldOut):
				soldOut++
			default:
				t.Errorf("buyer: %v", err)
			}
		}
		if ok != 3 || soldOut != 5 {
			t.Errorf("8 buyers for 3 units: %d orders, %d sold out; want 3 and 5", ok, soldOut)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.Fenced,
			InitialStock: 3, Stock: 0, Orders: 3, Sold: 3, Consistent: true})
	})
}

// TestBatchCapsSize: a batch takes at most BatchMax buyers; the rest are
// served by the next ones.
func TestBatchCapsSize(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "batch-cap", stock.Product{Strategy: strategy.Lua, Stock: 100, BatchMax: 4})
		for i, err := range queueBatch(t, b, shop, p, buyers(p.ID, 10), nil) {
			if err != nil {
				t.Errorf("buyer %d: %v", i, err)
			}
		}
		if e := shop.Events(p.ID); e.BatchedBuyers != 10 || e.Batches < 3 {
			t.Errorf("10 buyers, at most 4 per batch: served in %d batches; want at least 3", e.Batches)
		}
	})
}

// productLocker returns a locker of the kind strategy name locks products
// with, on its own clients, as another process would have; b must have an
// etcd cluster for strategy etcd (Env.WithEtcd).
func productLocker(t *testing.T, b *testenv.Env, name strategy.Name) dlock.Locker {
	t.Helper()
	mode, _ := name.LockMode()
	if mode == etcdlock.Mode {
		return etcdlock.New(b.Etcd.Client())
	}
	locker, err := dlock.New(mode, b.Redis.Clients())
	if err != nil {
		t.Fatal(err)
	}
	return locker
}

// TestHasOwnQueue says which products' orders wait in a queue of the shop's own, as
// far as this shop knows, once it has sold them (it asks only its cache:
// an unknown product costs no query): a batching strategy with BatchMax
// above zero, and redis-queue (its shared round trips); not an unbatched
// or another lock-free one, nor an unknown product.
func TestHasOwnQueue(t *testing.T) {
	b := testenv.NewEnv(t, testenv.Embedded)
	shop := newShops(t, b, 1, order.Options{})[0]
	tests := []struct {
		name string
		p    stock.Product
		want bool
	}{
		{"fenced+batch", stock.Product{Strategy: strategy.Fenced, Stock: 1, BatchMax: 8}, true},
		{"fenced", stock.Product{Strategy: strategy.Fenced, Stock: 1}, false},
		{"sql-atomic", stock.Product{Strategy: strategy.SQLAtomic, Stock: 1}, false},
		{"redis-queue", stock.Product{Strategy: strategy.RedisQueue, Stock: 1}, true},
	}
	ctx := context.Background()
	for _, tt := range tests {
		p := newProduct(t, b, "is-batched-"+strings.ReplaceAll(tt.name, "+", "-"), tt.p)
		if shop.HasOwnQueue(ctx, p.ID) {
			t.Errorf("%s: HasOwnQueue before its first order = true, want false (it goes through the door and loads the product)", tt.name)
		}
		if _, err := shop.Place(ctx, order.Request{UserID: "u", ProductID: p.ID, Quantity: 1}); err != nil {
			t.Fatalf("%s: Place: %v", tt.name, err)
		}
		if got := shop.HasOwnQueue(ctx, p.ID); got != tt.want {
			t.Errorf("%s: HasOwnQueue = %v, want %v", tt.name, got, tt.want)
		}
	}
	if shop.HasOwnQueue(ctx, "no-such-product") {
		t.Error("an unknown product: HasOwnQueue = true")
	}
}

// TestBatchedQueueIsBoundedByTheLockWait: batched buyers pass the shop's
// door, so when they come faster than batches serve them, the lock wait
// bounds their queue: a buyer no batch has taken within it is withdrawn,
// told lock_timeout, and nothing is written for it; a buyer who arrives
// once the batches have shown they cannot reach it in time is told busy at
// once (which of the two a buyer gets depends on when its goroutine ran).
// Here batches of one buyer with 50 ms of work serve 20 buyers a second,
// and 60 come at once with a lock wait of 300 ms: some are served, the
// rest are turned away, and the audit counts exactly the orders answered.
func TestBatchedQueueIsBoundedByTheLockWait(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shop := newShops(t, b, 1, order.Options{LockWait: 300 * time.Millisecond})[0]
		p := newProduct(t, b, "bounded-queue", stock.Product{Strategy: strategy.Fenced, Stock: 1000,
			LockTTL: 2 * time.Second, Work: 50 * time.Millisecond, BatchMax: 1})
		const buyerCount = 60
		var ok, turnedAway atomic.Int64
		var wg sync.WaitGroup
		for _, req := range buyers(p.ID, buyerCount) {
			wg.Go(func() {
				_, err := shop.Place(context.Background(), req)
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, order.ErrLockTimeout), errors.Is(err, order.ErrBusy):
					turnedAway.Add(1)
				default:
					t.Errorf("Place: %v, want an order, ErrLockTimeout or ErrBusy", err)
				}
			})
		}
		wg.Wait()
		t.Logf("%d orders, %d turned away", ok.Load(), turnedAway.Load())
		if turnedAway.Load() == 0 {
			t.Errorf("no buyer was turned away: 60 buyers at once waited for batches of one, 50 ms each, past the 300 ms lock wait")
		}
		n := int(ok.Load())
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.Fenced,
			InitialStock: 1000, Stock: 1000 - n, Orders: n, Sold: n, Consistent: true})
	})
}
