package order_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/reserve"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// shopOn is newShops for one shop on a database handle of our choosing.
func shopOn(t *testing.T, b *testenv.Env, db *gorm.DB, opts order.Options) *order.Service {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	clients := b.Redis.Clients()
	lockers := make(map[dlock.Mode]dlock.Locker)
	for _, m := range dlock.Modes() {
		l, err := dlock.New(m, clients)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		lockers[m] = l
	}
	opts.Reservations = reserve.New(clients[0])
	return order.NewService(db, stock.NewStore(db), lockers, opts)
}

// hookSleep is an Options.Sleep that runs hook (once, if armed) before
// sleeping as the default does.
type hookSleep struct {
	armed atomic.Bool
	hook  func(ctx context.Context)
}

func (h *hookSleep) Sleep(ctx context.Context, d time.Duration) error {
	if h.armed.CompareAndSwap(true, false) && h.hook != nil {
		h.hook(ctx)
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestRedisDecrGivesBackLandedOrder: a redis-decr commit lands but its
// answer is lost, and the database cannot be asked right then (it went away
// with the connection). "Could not ask" is not "not there": the units stay
// reserved until the database answers, the order is not given back, and
// Redis never offers a unit the database has sold.
func TestRedisDecrGivesBackLandedOrder(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, dbDown := range []bool{false, true} {
			t.Run(fmt.Sprintf("db-down-after-commit=%v", dbDown), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				db, f := b.DB.OpenPool(t)
				shop := shopOn(t, b, db, order.Options{})
				p := newProduct(t, b, "rv-landed", stock.Product{Strategy: strategy.RedisDecr, Stock: 3})
				mustPlace(ctx, t, shop, p.ID, "warm") // caches the product

				f.LoseNextAnswer(dbDown)
				_, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				b.DB.Start()
				t.Logf("Place for x, whose commit landed: err=%v", err)

				a := audit(t, shop, p.ID)
				t.Logf("audit: db stock %d, orders %d, redis %v, drift %d", a.Stock, a.Orders, deref(a.RedisStock), a.Drift)
				if a.Orders != 2 {
					t.Fatalf("setup: the lost-answer commit did not land (orders %d)", a.Orders)
				}
				// With the database gone right after the commit, nobody can
				// tell the buyer more than "in doubt" (the order may exist);
				// what must hold is that the sold unit is not given back.
				if err != nil && !(dbDown && errors.Is(err, order.ErrInDoubt)) {
					t.Errorf("Place answered %v, but x's order is in the database", err)
				}
				shop.Close() // let the settlement (if any) decide
				a = audit(t, shop, p.ID)
				if a.RedisStock == nil || a.Drift != 0 {
					t.Errorf("drift %d after a landed commit (Redis %v, DB %d): a sold unit was given back",
						a.Drift, deref(a.RedisStock), a.Stock)
				}
				// Sell out: everything after the drift sells from a phantom unit.
				for i := range 3 {
					_, err := shop.Place(ctx, order.Request{UserID: "after" + strconv.Itoa(i), ProductID: p.ID, Quantity: 1})
					t.Logf("after%d: %v", i, err)
				}
				a = audit(t, shop, p.ID)
				t.Logf("sold out: db stock %d, orders %d, redis %v, drift %d, oversold %d", a.Stock, a.Orders, deref(a.RedisStock), a.Drift, a.Oversold)
				if a.Drift != 0 {
					t.Errorf("after the sale: drift %d, want 0", a.Drift)
				}
			})
		}
	})
}

// TestRedisDecrRedisDownBeforeGiveBack: the database write fails and Redis
// is gone when the units are to be given back. The settlement keeps trying
// until Redis is back: no drift in the end, and the buyer whose order failed
// can buy.
func TestRedisDecrRedisDownBeforeGiveBack(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h := &hookSleep{}
		h.hook = func(context.Context) { b.DB.Stop(); b.Redis.Stop(0) }
		shop := newShops(t, b, 1, order.Options{Sleep: h.Sleep})[0]
		p := newProduct(t, b, "rv-givebackdown", stock.Product{Strategy: strategy.RedisDecr, Stock: 3})
		mustPlace(ctx, t, shop, p.ID, "warm")

		h.armed.Store(true)
		_, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
		t.Logf("Place for x with DB and Redis down after the reservation: %v", err)
		b.DB.Start()
		b.Redis.Start(0)

		// The give-back is settled in the background once both answer:
		// meanwhile x's clicks are duplicate_request, then x may buy.
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err = shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
			if !(errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrDuplicateRequest)) || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		a := audit(t, shop, p.ID)
		t.Logf("after recovery: db stock %d, redis %v, drift %d (%s)", a.Stock, deref(a.RedisStock), a.Drift, a.RedisErr)
		if a.RedisStock == nil || a.Drift != 0 {
			t.Errorf("after recovery: drift %d, want 0 (a unit is lost)", a.Drift)
		}
		if err != nil {
			t.Errorf("x, who has no order, tries again after recovery: %v", err)
		}
	})
}

// TestRedisDecrRepeatedClickDuringGiveBack: a buyer's second click while the
// first click's order is failing is told duplicate_request (wait, one is on
// its way), never duplicate_order: no order exists.
func TestRedisDecrRepeatedClickDuringGiveBack(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var shop *order.Service
		var second error
		h := &hookSleep{}
		shop = newShops(t, b, 1, order.Options{Sleep: h.Sleep})[0]
		p := newProduct(t, b, "rv-click", stock.Product{Strategy: strategy.RedisDecr, Stock: 3})
		mustPlace(ctx, t, shop, p.ID, "warm")
		h.hook = func(context.Context) {
			b.DB.Stop()
			_, second = shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
		}
		h.armed.Store(true)
		_, first := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
		b.DB.Start()
		t.Logf("first click: %v; second click: %v", first, second)
		if errors.Is(second, order.ErrDuplicateOrder) && first != nil {
			t.Errorf("second click told %v, yet the first failed (%v) and x has no order", second, first)
		}
	})
}

// TestCancelWhileWaitingForConnection: a request whose context ends while
// its order waits for a database connection (the pool exhausted) gets its
// error at once, and nothing is written.
func TestCancelWhileWaitingForConnection(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.Fenced, strategy.SQLAtomic, strategy.RedisDecr} {
			t.Run(string(name), func(t *testing.T) {
				bg := context.Background()
				shop := newShops(t, b, 1, order.Options{})[0]
				p := newProduct(t, b, "rv-pool-"+string(name), stock.Product{Strategy: name, Stock: 3})
				mustPlace(bg, t, shop, p.ID, "warm")

				sqlDB, err := b.DB.DB().DB()
				if err != nil {
					t.Fatal(err)
				}
				// Take every connection of the pool.
				n := sqlDB.Stats().MaxOpenConnections
				var held []interface{ Close() error }
				for range n {
					c, err := sqlDB.Conn(bg)
					if err != nil {
						t.Fatal(err)
					}
					held = append(held, c)
				}
				const hold = 3 * time.Second
				go func() {
					time.Sleep(hold)
					for _, c := range held {
						c.Close()
					}
				}()
				ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
				defer cancel()
				start := time.Now()
				_, err = shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				took := time.Since(start)
				t.Logf("Place with a 300ms deadline, pool exhausted for %v: took %v, err %v", hold, took, err)
				if took > time.Second {
					t.Errorf("Place ignored its context: took %v (deadline 300ms)", took)
				}
				time.Sleep(hold) // let the pool come back before cleanup
			})
		}
	})
}

// TestAtomicRepeatedClicksDeadlock: sql-atomic under repeated clicks by the
// same buyers on a sold-out product. The INSERT-first transactions meet on
// the unique key and the database may report a deadlock (MySQL 1213): each
// click is answered sold_out, duplicate_order or a retryable unavailable,
// never an unexplained error.
func TestAtomicRepeatedClicksDeadlock(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.SQLAtomic, strategy.RedisDecr} {
			t.Run(string(name), func(t *testing.T) {
				var other atomic.Int64
				var sample sync.Map
				for round := range 5 {
					shops := newShops(t, b, 4, order.Options{})
					p := newProduct(t, b, "rv-dl-"+string(name), stock.Product{Strategy: name, Stock: 2})
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					var wg sync.WaitGroup
					start := make(chan struct{})
					for u := range 16 {
						for c := range 4 {
							shop := shops[(u*4+c)%len(shops)]
							wg.Go(func() {
								<-start
								_, err := shop.Place(ctx, order.Request{UserID: "u" + strconv.Itoa(u), ProductID: p.ID, Quantity: 1})
								switch {
								case err == nil, errors.Is(err, order.ErrSoldOut), errors.Is(err, order.ErrDuplicateOrder),
									errors.Is(err, order.ErrDuplicateRequest):
								default:
									other.Add(1)
									sample.LoadOrStore(fmt.Sprintf("%T", errors.Unwrap(err)), err.Error())
								}
							})
						}
					}
					close(start)
					wg.Wait()
					cancel()
					a := audit(t, shops[0], p.ID)
					if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent {
						t.Errorf("round %d: audit %+v", round, a)
					}
				}
				sample.Range(func(k, v any) bool { t.Logf("error: %v", v); return true })
				if n := other.Load(); n > 0 {
					t.Errorf("%d orders ended in an error that is neither sold out nor duplicate", n)
				}
			})
		}
	})
}

// TestAtomicDistinctBuyers: the same rush with 64 distinct buyers, one click
// each.
func TestAtomicDistinctBuyers(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.SQLAtomic, strategy.RedisDecr} {
			t.Run(string(name), func(t *testing.T) {
				var other atomic.Int64
				var sample sync.Map
				for round := range 5 {
					shops := newShops(t, b, 4, order.Options{})
					p := newProduct(t, b, "rv-db-"+string(name), stock.Product{Strategy: name, Stock: 8})
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					var wg sync.WaitGroup
					start := make(chan struct{})
					for u := range 64 {
						shop := shops[u%len(shops)]
						wg.Go(func() {
							<-start
							_, err := shop.Place(ctx, order.Request{UserID: "u" + strconv.Itoa(u), ProductID: p.ID, Quantity: 1})
							switch {
							case err == nil, errors.Is(err, order.ErrSoldOut), errors.Is(err, order.ErrDuplicateOrder):
							default:
								other.Add(1)
								sample.LoadOrStore(err.Error()[:40], err.Error())
							}
						})
					}
					close(start)
					wg.Wait()
					cancel()
					a := audit(t, shops[0], p.ID)
					if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent || a.Stock != 0 {
						t.Errorf("round %d: audit %+v", round, a)
					}
				}
				sample.Range(func(k, v any) bool { t.Logf("error: %v", v); return true })
				if n := other.Load(); n > 0 {
					t.Errorf("%d orders ended in an error that is neither sold out nor duplicate", n)
				}
			})
		}
	})
}

// TestLockLostRollsBack: the lock is lost (Redis goes away) while a fenced
// holder works inside its transaction, or a lua holder before it: nothing
// is written, Place says ErrLockLost or ErrUnavailable, and no connection
// stays checked out.
func TestLockLostRollsBack(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.Fenced, strategy.Lua} {
			t.Run(string(name), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				h := &hookSleep{}
				h.hook = func(context.Context) { b.Redis.Stop(0) }
				shop := newShops(t, b, 1, order.Options{Sleep: h.Sleep})[0]
				p := newProduct(t, b, "rv-lost-"+string(name), stock.Product{Strategy: name, Stock: 5,
					LockTTL: 200 * time.Millisecond, Work: time.Second})
				mustPlace(ctx, t, shop, p.ID, "warm")
				h.armed.Store(true)
				_, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				b.Redis.Start(0)
				t.Logf("Place while the lock is lost: %v", err)
				if !errors.Is(err, order.ErrLockLost) && !errors.Is(err, order.ErrUnavailable) {
					t.Errorf("got %v, want ErrLockLost", err)
				}
				a := audit(t, shop, p.ID)
				if a.Orders != 1 || a.Stock != 4 {
					t.Errorf("audit after a lost lock: %+v", a)
				}
				noConnectionInUse(t, b)
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
				p := newProduct(t, b, "rv-cancel-"+strings.ReplaceAll(label, "+", "-"), stock.Product{Strategy: name, Stock: 40,
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
				noConnectionInUse(t, b)
			})
		}
	})
}

// TestNoGoroutineGrowth: goroutines do not pile up across rushes with late
// commits and cancellations (the same shops reused).
func TestNoGoroutineGrowth(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shops := newShops(t, b, 2, order.Options{LockWait: 5 * time.Second})
		var counts []int
		for round := range 4 {
			for _, name := range []strategy.Name{strategy.Fenced, strategy.SQLAtomic, strategy.RedisDecr, strategy.Lua} {
				p := newProduct(t, b, "rv-leak-"+string(name), stock.Product{Strategy: name, Stock: 5,
					LockTTL: 100 * time.Millisecond, LateCommit: 150 * time.Millisecond, LateCommitEvery: 3})
				var wg sync.WaitGroup
				for i := range 20 {
					wg.Go(func() {
						ctx, cancel := context.WithTimeout(context.Background(), time.Duration(50+i*20)*time.Millisecond)
						defer cancel()
						shops[i%2].Place(ctx, order.Request{UserID: "u" + strconv.Itoa(i), ProductID: p.ID, Quantity: 1})
					})
				}
				wg.Wait()
			}
			time.Sleep(time.Second)
			counts = append(counts, runtime.NumGoroutine())
			_ = round
		}
		t.Logf("goroutines after each round: %v", counts)
		if os.Getenv("RV_DUMP") != "" {
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		}
		// Growth seen here is pooled Redis connections (proxy pipes and
		// miniredis peers, 3 goroutines each), not the order flow.
		noConnectionInUse(t, b)
	})
}

// TestLostCommitAnswerOtherStrategies: a commit lands but its answer is lost,
// the database still up. Every strategy asks whether the order is there and
// answers success: the buyer is never told "nothing was written" about an
// order that exists.
func TestLostCommitAnswerOtherStrategies(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.SQLAtomic, strategy.Fenced, strategy.Lua} {
			t.Run(string(name), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				db, f := b.DB.OpenPool(t)
				shop := shopOn(t, b, db, order.Options{})
				p := newProduct(t, b, "rv-lost-answer-"+string(name), stock.Product{Strategy: name, Stock: 3})
				mustPlace(ctx, t, shop, p.ID, "warm")
				f.LoseNextAnswer(false)
				_, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				_, retry := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				a := audit(t, shop, p.ID)
				t.Logf("first: %v; retry: %v; orders %d", err, retry, a.Orders)
				if a.Orders == 2 && err != nil {
					t.Errorf("Place answered %v for an order that was written", err)
				}
			})
		}
	})
}

// TestRedisDecrPhantomUnitNeverHeals: once Redis offers a unit the database
// does not have (Redis drifted above it), the database's refusal brings
// Redis down to the database's stock, and the sale ends sold out in both.
func TestRedisDecrPhantomUnitNeverHeals(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "rv-phantom", stock.Product{Strategy: strategy.RedisDecr, Stock: 1})
		mustPlace(ctx, t, shop, p.ID, "a")
		// Redis reloaded mid-sale / a sold unit given back: one phantom unit.
		if err := b.Redis.Clients()[0].IncrBy(ctx, "flashsale:stock:{"+p.ID+"}", 1).Err(); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			_, err := shop.Place(ctx, order.Request{UserID: "late" + strconv.Itoa(i), ProductID: p.ID, Quantity: 1})
			if !errors.Is(err, order.ErrSoldOut) {
				t.Fatalf("got %v", err)
			}
		}
		a := audit(t, shop, p.ID)
		if a.RedisStock == nil || *a.RedisStock != 0 || a.Drift != 0 {
			t.Errorf("the phantom unit is never retired: Redis %v, drift %d", deref(a.RedisStock), a.Drift)
		}
	})
}

// TestGiveBackRecreatesMissingStock: a give-back for a product whose stock
// key Redis no longer has (evicted, deleted, flushed while the buyers' hash
// survived) does not recreate the stock as just the given-back units: the
// next order loads it from the database, and the sale sells exactly.
func TestGiveBackRecreatesMissingStock(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		h := &hookSleep{}
		shop := newShops(t, b, 1, order.Options{Sleep: h.Sleep})[0]
		p := newProduct(t, b, "rv-recreate", stock.Product{Strategy: strategy.RedisDecr, Stock: 5})
		mustPlace(ctx, t, shop, p.ID, "warm")
		rc := b.Redis.Clients()[0]
		h.hook = func(context.Context) {
			rc.Del(ctx, "flashsale:stock:{"+p.ID+"}") // the stock key is lost, the buyers hash is not
			b.DB.Stop()
		}
		h.armed.Store(true)
		_, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
		b.DB.Start()
		t.Logf("x: %v", err)
		sold := 0
		for i := range 6 {
			deadline := time.Now().Add(5 * time.Second)
			for {
				_, err = shop.Place(ctx, order.Request{UserID: "b" + strconv.Itoa(i), ProductID: p.ID, Quantity: 1})
				if !errors.Is(err, order.ErrUnavailable) || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err == nil {
				sold++
			}
		}
		a := audit(t, shop, p.ID)
		t.Logf("sold %d more; db stock %d, redis %v, drift %d", sold, a.Stock, deref(a.RedisStock), a.Drift)
		if a.Stock != 0 {
			t.Errorf("sale ended with %d units unsold in the database (Redis says %v)", a.Stock, deref(a.RedisStock))
		}
	})
}

// noConnectionInUse fails t if a database connection is still checked out
// a moment after the last call returned. A query cancelled mid-flight gives
// its connection back from the driver's own goroutine, a little later.
func noConnectionInUse(t *testing.T, b *testenv.Env) {
	t.Helper()
	sqlDB, _ := b.DB.DB().DB()
	n := sqlDB.Stats().InUse
	for end := time.Now().Add(2 * time.Second); n != 0 && time.Now().Before(end); n = sqlDB.Stats().InUse {
		time.Sleep(10 * time.Millisecond)
	}
	if n != 0 {
		t.Errorf("%d connections still in use 2s after the last call returned", n)
	}
}
