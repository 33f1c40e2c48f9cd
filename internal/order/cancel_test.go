package order_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Tests of buyers who give up (their request's context ends) at any point
// of the order flow, one at a time or batched: they get their context's
// error, and nothing is written for them.

// TestCancelWhileWaitingForConnection: a request whose context ends while
// its order waits for a database connection (the pool exhausted) gets its
// error at once, and nothing is written.
func TestCancelWhileWaitingForConnection(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.Fenced, strategy.SQLAtomic, strategy.RedisDecr} {
			t.Run(string(name), func(t *testing.T) {
				bg := context.Background()
				shop := newShops(t, b, 1, order.Options{})[0]
				p := newProduct(t, b, "cancel-pool-"+string(name), stock.Product{Strategy: name, Stock: 3})
				mustPlace(bg, t, shop, p.ID, "warm")

				sqlDB, err := b.DB.DB().DB()
				if err != nil {
					t.Fatal(err)
				}
				// Take every connection of the pool until Place has returned,
				// or for 3 s at most: a Place that ignores its context then
				// fails the test instead of hanging it.
				n := sqlDB.Stats().MaxOpenConnections
				var held []*sql.Conn
				for range n {
					c, err := sqlDB.Conn(bg)
					if err != nil {
						t.Fatal(err)
					}
					held = append(held, c)
				}
				var once sync.Once
				giveBack := func() {
					once.Do(func() {
						for _, c := range held {
							c.Close()
						}
					})
				}
				timer := time.AfterFunc(3*time.Second, giveBack)
				ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
				defer cancel()
				start := time.Now()
				_, err = shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				took := time.Since(start)
				timer.Stop()
				giveBack()
				t.Logf("Place with a 300ms deadline, the pool exhausted: took %v, err %v", took, err)
				if took > time.Second {
					t.Errorf("Place ignored its context: took %v (deadline 300ms)", took)
				}
				if a := audit(t, shop, p.ID); a.Orders != 1 || a.Stock != 2 {
					t.Errorf("after x gave up: %d orders, stock %d; want the warm-up's alone: 1, 2", a.Orders, a.Stock)
				}
			})
		}
	})
}

// TestRandomCancellations: a rush in which callers give up at random moments
// (short request deadlines), with a slow Redis node: the lock-free and
// fenced strategies, fenced batched too (buyers withdrawn from a queue or
// given up inside a batch), stay exact, redis-decr ends with drift 0, and
// no connection stays checked out.
func TestRandomCancellations(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, c := range []struct {
			name  strategy.Name
			batch int
		}{{strategy.Fenced, 0}, {strategy.Fenced, 16}, {strategy.SQLAtomic, 0}, {strategy.RedisDecr, 0}} {
			name := c.name
			label := string(name)
			if c.batch > 0 {
				label += "+batch"
			}
			t.Run(label, func(t *testing.T) {
				b.Redis.SetDelay(0, time.Millisecond)
				defer b.Redis.SetDelay(0, 0)
				shops := newShops(t, b, 2, order.Options{LockWait: 2 * time.Second})
				p := newProduct(t, b, "cancel-"+strings.ReplaceAll(label, "+", "-"), stock.Product{Strategy: name, Stock: 40,
					LockTTL: 500 * time.Millisecond, Work: 2 * time.Millisecond, BatchMax: c.batch})
				mustPlace(context.Background(), t, shops[0], p.ID, "warm0")
				mustPlace(context.Background(), t, shops[1], p.ID, "warm1")
				var ok, cancelled, other atomic.Int64
				ok.Store(2)
				var wg sync.WaitGroup
				for i := range 120 {
					shop := shops[i%2]
					wg.Go(func() {
						d := time.Duration(i%40) * 2 * time.Millisecond
						ctx, cancel := context.WithTimeout(context.Background(), d+time.Millisecond)
						defer cancel()
						_, err := shop.Place(ctx, order.Request{UserID: "u" + strconv.Itoa(i), ProductID: p.ID, Quantity: 1})
						switch {
						case err == nil:
							ok.Add(1)
						case errors.Is(err, context.DeadlineExceeded):
							cancelled.Add(1)
						case errors.Is(err, order.ErrSoldOut), errors.Is(err, order.ErrLockTimeout), errors.Is(err, order.ErrUnavailable), errors.Is(err, order.ErrLockLost):
						default:
							other.Add(1)
							t.Logf("unexpected: %v", err)
						}
					})
				}
				wg.Wait()
				for _, s := range shops {
					s.Close() // the settlements of cancelled reservations end
				}
				a := audit(t, shops[0], p.ID)
				t.Logf("%d ok (told), %d cancelled; audit orders %d stock %d redis %v drift %d", ok.Load(), cancelled.Load(), a.Orders, a.Stock, deref(a.RedisStock), a.Drift)
				if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent || int64(a.Orders) < ok.Load() {
					t.Errorf("audit %+v", a)
				}
				if name == strategy.RedisDecr && (a.RedisStock == nil || a.Drift != 0) {
					t.Errorf("drift %d", a.Drift)
				}
				if int64(a.Orders) != ok.Load() {
					t.Logf("NOTE: %d orders exist whose buyers were told failure", int64(a.Orders)-ok.Load())
				}
				noConnectionInUse(t, b.DB.DB())
			})
		}
	})
}

// TestBatchQueuedBuyerGivesUp: a buyer whose request ends while it is
// queued for a batch gets its context's error and is not written; the
// others in the queue are served.
func TestBatchQueuedBuyerGivesUp(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "batch-gone", stock.Product{Strategy: strategy.Fenced, Stock: 5, BatchMax: 32})
		reqs := buyers(p.ID, 4)
		ctxs := make([]context.Context, len(reqs))
		for i := range ctxs {
			ctxs[i] = context.Background()
		}
		short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		ctxs[1] = short
		errs := queueBatch(t, b, shop, p, reqs, ctxs)
		for i, err := range errs {
			want := error(nil)
			if i == 1 {
				want = context.DeadlineExceeded
			}
			if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
				t.Errorf("%s: got %v, want %v", reqs[i].UserID, err, want)
			}
		}
		a := audit(t, shop, p.ID)
		if a.Orders != 3 || a.Stock != 2 {
			t.Errorf("audit: %d orders, stock %d; want 3 and 2 (%s not written)", a.Orders, a.Stock, reqs[1].UserID)
		}
	})
}

// TestBatchBuyerGivesUpDuringItsBatch: a buyer whose ctx ends while its
// batch waits for the database or does the work is withdrawn, as it would
// be unbatched: it hears ctx's error at once and nothing is written for it.
func TestBatchBuyerGivesUpDuringItsBatch(t *testing.T) {
	testenv.SkipShort(t, "TestBatchQueuedBuyerGivesUp and TestRandomCancellations check batched buyers giving up")
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t)
		shop := newShops(t, b, 1, order.Options{})[0]
		for _, s := range []strategy.Name{strategy.Lua, strategy.Etcd} {
			for _, batch := range []int{8, 0} {
				p := newProduct(t, b, "gives-up", stock.Product{Strategy: s, Stock: 5,
					LockTTL: 2 * time.Second, Work: 800 * time.Millisecond, BatchMax: batch})
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				start := time.Now()
				_, err := shop.Place(ctx, order.Request{UserID: "u", ProductID: p.ID, Quantity: 1})
				took := time.Since(start)
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s, batch_max %d: Place with a 100ms ctx: %v, want its deadline", s, batch, err)
				}
				if took > 400*time.Millisecond {
					t.Errorf("%s, batch_max %d: Place returned %v after its 100ms ctx ended, not at once", s, batch, took-100*time.Millisecond)
				}
				if batch > 0 {
					// The batch goes on without it: wait until it has ended.
					testenv.WaitFor(t, 10*time.Second, "the batch to end", func() bool { return shop.Events(p.ID).Batches == 1 })
				}
				if a := audit(t, shop, p.ID); a.Orders != 0 || a.Stock != 5 {
					t.Errorf("%s, batch_max %d: %d orders written, stock %d, want none for a buyer who gave up", s, batch, a.Orders, a.Stock)
				}
			}
		}
	})
}
