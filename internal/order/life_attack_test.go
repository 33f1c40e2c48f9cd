package order_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The attacks on the order life that the tests of
// unpaid_test.go and sweep_test.go do not make.

// TestLifeSweepNotStarvedByAStuckProduct: a product whose returns
// cannot run now (its lock's Redis is down) holds more due orders than
// one sweep's batch, all due before another product's. The other
// product's return needs no Redis (sql-atomic): its expired order must
// still go back on sale, as Sweep's doc says ("the others are swept all
// the same").
func TestLifeSweepNotStarvedByAStuckProduct(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		// 10 stuck orders: the control, within one batch; 260: beyond it.
		for _, stuckOrders := range []int{10, 260} {
			t.Run(strconv.Itoa(stuckOrders)+" stuck", func(t *testing.T) {
				r := &testenv.Env{Mode: b.Mode, Redis: testenv.NewRedis(t, testenv.Embedded), DB: testenv.NewDB(t, b.Mode)}
				starvedSweep(t, r, stuckOrders)
			})
		}
	})
}

// starvedSweep is TestLifeSweepNotStarvedByAStuckProduct with n due
// orders of the stuck product, on a database of its own.
func starvedSweep(t *testing.T, b *testenv.Env, n int) {
	ctx := context.Background()
	shop := newShops(t, b, 1, order.Options{SweepEvery: -1, LockWait: 100 * time.Millisecond})[0]
	stuck := payable(t, b, stock.Product{Strategy: strategy.Lua}, n, 20*time.Millisecond)
	var last order.Order
	for _, r := range buyers(stuck.ID, n) {
		last = place(ctx, t, shop, stuck, r.UserID)
	}
	free := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 1, 20*time.Millisecond)
	o := place(ctx, t, shop, free, "free-buyer")
	waitDue(ctx, t, b, shop, last, o)
	for i := range b.Redis.Len() {
		b.Redis.Stop(i) // the lua product's lock cannot be taken now
	}
	for range 3 {
		_, _ = shop.Sweep(ctx) // the lua product's error is expected
	}
	if st := stateOf(ctx, t, shop, o.ID); st.State != life.Expired {
		t.Errorf("sql-atomic order is %q after 3 sweeps, want expired: the stuck product's %d due orders come first", st.State, n)
	}
	if got := stockOf(ctx, t, shop, free); got != 1 {
		t.Errorf("sql-atomic stock %d, want 1 (its unit back)", got)
	}
}

// TestLifePayAtTheDeadline: for every strategy whose stock lives in
// the database, one shop pays each order when the database's clock is
// within a millisecond of its deadline while another sweeps without a
// pause: each order ends paid exactly when its payment was told so, and
// the units sold are the payments.
func TestLifePayAtTheDeadline(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		payer := newShops(t, b, 1, order.Options{SweepEvery: -1})[0]
		sweeper := newShops(t, b, 1, order.Options{SweepEvery: -1})[0]
		db := b.DB.DB()
		dbNow := func() int64 {
			var now int64
			if err := db.Raw("SELECT " + life.NowMs(db)).Row().Scan(&now); err != nil {
				t.Fatalf("the database's now: %v", err)
			}
			return now
		}
		for _, row := range lifeStrategies(false) {
			t.Run(row.name, func(t *testing.T) {
				const n = 6
				p := payable(t, b, row.p, n, 60*time.Millisecond)
				var orders []order.Order
				for _, r := range buyers(p.ID, n) {
					orders = append(orders, place(ctx, t, payer, p, r.UserID))
				}
				stop := make(chan struct{})
				swept := make(chan struct{})
				go func() { // the other shop sweeps without a pause
					defer close(swept)
					for {
						select {
						case <-stop:
							return
						default:
						}
						_, _ = sweeper.Sweep(ctx)
					}
				}()
				told := map[string]bool{}
				var mu sync.Mutex
				var wg sync.WaitGroup
				for i, o := range orders {
					dl := stateOf(ctx, t, payer, o.ID).Deadline.UnixMilli()
					aim := dl - 1 + int64(i%3) // a millisecond before, at, after
					wg.Go(func() {
						for dbNow() < aim {
						}
						_, err := payer.Pay(ctx, o.ID)
						if err != nil && !errors.Is(err, order.ErrExpired) {
							t.Errorf("Pay: %v", err)
						}
						mu.Lock()
						told[o.ID] = err == nil
						mu.Unlock()
					})
				}
				wg.Wait()
				testenv.WaitFor(t, 10*time.Second, "the unpaid orders to expire", func() bool {
					for _, o := range orders {
						if stateOf(ctx, t, payer, o.ID).State == life.Pending {
							return false
						}
					}
					return true
				})
				close(stop)
				<-swept
				paid := 0
				for _, o := range orders {
					st := stateOf(ctx, t, payer, o.ID).State
					if (st == life.Paid) != told[o.ID] {
						t.Errorf("order %s is %q, its payment was told paid=%v", o.ID, st, told[o.ID])
					}
					if st == life.Paid {
						paid++
					}
				}
				if a := auditOf(ctx, t, payer, p); a.Stock != n-paid {
					t.Errorf("stock %d, want %d (%d paid)", a.Stock, n-paid, paid)
				}
			})
		}
	})
}

// TestLifeCancelsRacingSweepsOfManyOrders: every order of a product
// is cancelled by its buyer while three shops sweep the same due orders.
// A cancel either wins (cancelled) or finds the order expired (409);
// no buyer gets a database error (a deadlock left after Commit's
// retries), and every unit goes back once.
func TestLifeCancelsRacingSweepsOfManyOrders(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		for _, row := range []struct {
			name string
			p    stock.Product
		}{
			{"sql-atomic", stock.Product{Strategy: strategy.SQLAtomic}},
			{"sql-for-update", stock.Product{Strategy: strategy.SQLForUpdate}},
			{"fenced", stock.Product{Strategy: strategy.Fenced}},
		} {
			t.Run(row.name, func(t *testing.T) {
				const n = 64
				shops := newShops(t, b, 3, order.Options{SweepEvery: -1})
				p := payable(t, b, row.p, n, 30*time.Millisecond)
				var orders []order.Order
				for _, r := range buyers(p.ID, n) {
					orders = append(orders, place(ctx, t, shops[0], p, r.UserID))
				}
				waitDue(ctx, t, b, shops[0], orders...)
				failures := make(chan error, 2*n)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i, o := range orders {
					wg.Go(func() {
						<-start
						_, err := shops[i%len(shops)].Cancel(ctx, o.ID)
						if err != nil && !errors.Is(err, order.ErrExpired) {
							failures <- err
						}
					})
				}
				for _, s := range shops {
					wg.Go(func() {
						<-start
						for range 3 {
							if _, err := s.Sweep(ctx); err != nil {
								failures <- err
							}
						}
					})
				}
				close(start)
				wg.Wait()
				close(failures)
				var errs []string
				for err := range failures {
					errs = append(errs, err.Error())
				}
				if len(errs) > 0 {
					t.Errorf("%d cancels or sweeps failed, first: %s", len(errs), errs[0])
				}
				for range 3 {
					_, _ = shops[0].Sweep(ctx)
				}
				if a := auditOf(ctx, t, shops[0], p); a.Stock != n || a.Sold != 0 {
					t.Errorf("stock %d, sold %d; want %d and 0", a.Stock, a.Sold, n)
				}
			})
		}
	})
}

// TestLifeDueUsesItsIndex: the sweep's question (life.Due) and the
// start-up's (sweepIfPending) read orders_state_deadline on MariaDB and
// SQLite, not the whole orders table.
func TestLifeDueUsesItsIndex(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{SweepEvery: -1})[0]
		paidNow := newProduct(t, b, "final", stock.Product{Strategy: strategy.SQLAtomic, Stock: 50})
		for _, r := range buyers(paidNow.ID, 50) {
			place(ctx, t, shop, paidNow, r.UserID)
		}
		db := b.DB.DB()
		q := `SELECT id FROM orders WHERE state = 'pending' AND deadline_ms <= ` + life.NowMs(db) + ` ORDER BY deadline_ms LIMIT 256`
		var plan []string
		if db.Dialector.Name() == "sqlite" {
			rows, err := db.Raw("EXPLAIN QUERY PLAN " + q).Rows()
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
		} else {
			var rows []map[string]any
			if err := db.Raw("EXPLAIN " + q).Scan(&rows).Error; err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				plan = append(plan, "type="+asString(r["type"])+" key="+asString(r["key"])+" extra="+asString(r["Extra"]))
			}
		}
		joined := strings.Join(plan, "; ")
		if !strings.Contains(joined, "orders_state_deadline") || strings.Contains(joined, "filesort") ||
			strings.Contains(joined, "TEMP B-TREE") {
			t.Errorf("Due's plan does not read orders_state_deadline in order: %s", joined)
		}
	})
}

func asString(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(v)
	case string:
		return v
	}
	return "?"
}

// TestLifeRetriedCancelAfterLostAnswer: a cancel whose COMMIT landed
// but whose answer was lost is sent again, to another shop: it answers
// cancelled, the unit is back once, and the audit counts one return.
func TestLifeRetriedCancelAfterLostAnswer(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		for _, row := range lifeStrategies(false) {
			t.Run(row.name, func(t *testing.T) {
				pool, fault := b.DB.OpenPool(t)
				lossy := shopOn(t, b, pool, order.Options{SweepEvery: -1})
				other := newShops(t, b, 1, order.Options{SweepEvery: -1})[0]
				p := payable(t, b, row.p, 5, time.Minute)
				o := place(ctx, t, other, p, "Buyer")
				fault.LoseNextAnswer(false)
				if _, err := lossy.Cancel(ctx, o.ID); err == nil {
					t.Fatalf("Cancel with its answer lost: nil error (lost %d answers)", fault.Lost())
				}
				st, err := other.Cancel(ctx, o.ID)
				if err != nil || st.State != life.Cancelled {
					t.Fatalf("retried Cancel: %v, %q; want cancelled", err, st.State)
				}
				if a := auditOf(ctx, t, other, p); a.Stock != 5 {
					t.Errorf("stock %d, want 5: the unit back once", a.Stock)
				}
				// The shops' counters cannot know the lost answer's commit
				// landed; the audit does: one order cancelled, its unit back.
				if a := auditOf(ctx, t, other, p); a.Life == nil || a.Life.Cancelled != 1 {
					t.Errorf("audit life %+v, want 1 cancelled (the unit went back once)", a.Life)
				}
				// The buyer may buy again, in every case variant's own name.
				for _, u := range []string{"Buyer", "buyer", "BUYER"} {
					if _, err := other.Place(ctx, order.Request{UserID: u, ProductID: p.ID, Quantity: 1}); err != nil {
						t.Errorf("Place for %s after the cancel: %v", u, err)
					}
				}
				if _, err := other.Place(ctx, order.Request{UserID: "Buyer", ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrDuplicateOrder) {
					t.Errorf("second Place for Buyer while pending: %v, want ErrDuplicateOrder", err)
				}
			})
		}
	})
}

// TestLifeCancelKilledMidReturn: a shop's cancel dies between the
// order's compare-and-set and the unit's return (its context cancelled
// there, as by a client gone or a shop stopping): nothing of it stays,
// and a retry in another shop cancels the order and returns the unit
// once, for every strategy whose stock lives in the database.
func TestLifeCancelKilledMidReturn(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		pool, _ := b.DB.OpenPool(t)
		var kill sync.Map // order id -> context.CancelFunc
		err := pool.Callback().Raw().After("gorm:raw").Register("test:kill_after_end", func(db *gorm.DB) {
			sql := db.Statement.SQL.String()
			if !strings.HasPrefix(sql, "UPDATE orders SET state = ") {
				return
			}
			kill.Range(func(_, v any) bool {
				v.(context.CancelFunc)()
				return true
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		doomed := shopOn(t, b, pool, order.Options{SweepEvery: -1})
		other := newShops(t, b, 1, order.Options{SweepEvery: -1})[0]
		for _, row := range lifeStrategies(false) {
			t.Run(row.name, func(t *testing.T) {
				ctx := context.Background()
				p := payable(t, b, row.p, 3, time.Minute)
				o := place(ctx, t, other, p, "u1")
				dctx, cancel := context.WithCancel(ctx)
				kill.Store(o.ID, cancel)
				_, err := doomed.Cancel(dctx, o.ID)
				kill.Delete(o.ID)
				cancel()
				if err == nil {
					t.Fatalf("the doomed cancel: nil error")
				}
				if st := stateOf(ctx, t, other, o.ID); st.State != life.Pending || stockOf(ctx, t, other, p) != 2 {
					t.Fatalf("after the doomed cancel (%v): %q, stock %d; want pending and 2", err, st.State, stockOf(ctx, t, other, p))
				}
				var st order.OrderStatus
				testenv.WaitFor(t, 10*time.Second, "a retried cancel to go through", func() bool {
					st, err = other.Cancel(ctx, o.ID)
					return err == nil
				})
				if st.State != life.Cancelled {
					t.Fatalf("retried cancel: %q, want cancelled", st.State)
				}
				if a := auditOf(ctx, t, other, p); a.Stock != 3 {
					t.Errorf("stock %d, want 3: the unit back once", a.Stock)
				}
			})
		}
	})
}

// TestLifeRebuyRacingSweeps: every buyer of a sold-out product clicks
// again while three shops sweep their expired orders: a click is refused
// as a duplicate while the old order is pending, and goes through once
// it expired; none meets a database error (a deadlock between the
// sweep's unique_buyer = NULL and the sale's INSERT on the unique key).
func TestLifeRebuyRacingSweeps(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		for _, row := range []struct {
			name string
			p    stock.Product
		}{
			{"sql-atomic", stock.Product{Strategy: strategy.SQLAtomic}},
			{"sql-atomic+k4", stock.Product{Strategy: strategy.SQLAtomic, Buckets: 4}},
			{"sql-one-trip", stock.Product{Strategy: strategy.SQLOneTrip}},
			{"fenced+batch", stock.Product{Strategy: strategy.Fenced, BatchMax: 8}},
		} {
			t.Run(row.name, func(t *testing.T) {
				const n = 48
				shops := newShops(t, b, 3, order.Options{SweepEvery: -1})
				p := payable(t, b, row.p, n, 40*time.Millisecond)
				var orders []order.Order
				for _, r := range buyers(p.ID, n) {
					orders = append(orders, place(ctx, t, shops[0], p, r.UserID))
				}
				waitDue(ctx, t, b, shops[0], orders...)
				stop := make(chan struct{})
				failures := make(chan error, 4*n)
				var sweeps, clicks sync.WaitGroup
				for _, s := range shops {
					sweeps.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							if _, err := s.Sweep(ctx); err != nil {
								failures <- err
							}
						}
					})
				}
				for i, r := range buyers(p.ID, n) {
					clicks.Go(func() {
						deadline := time.Now().Add(10 * time.Second)
						for time.Now().Before(deadline) {
							_, err := shops[i%len(shops)].Place(ctx, r)
							switch {
							case err == nil:
								return
							case errors.Is(err, order.ErrDuplicateOrder), errors.Is(err, order.ErrSoldOut):
								continue // the old order not swept yet
							default:
								failures <- err
								return
							}
						}
						failures <- errors.New("buyer " + r.UserID + " never bought again")
					})
				}
				clicks.Wait()
				close(stop)
				sweeps.Wait()
				close(failures)
				var errs []string
				for err := range failures {
					errs = append(errs, err.Error())
				}
				if len(errs) > 0 {
					t.Errorf("%d clicks or sweeps failed, first: %s", len(errs), errs[0])
				}
				// The new orders expire too (the same window): the audit's
				// balance and its duplicates are what must hold.
				if a := auditOf(ctx, t, shops[0], p); a.DuplicateOrders != 0 {
					t.Errorf("duplicates %d, want 0", a.DuplicateOrders)
				}
			})
		}
	})
}

// TestLifeCancelAfterTheDeadline: an order past its deadline, not yet
// swept, is refused a payment as expired (409); a cancel of it then must
// not answer it cancelled: the buyer was told expired, and the order
// ends expired, its unit back once.
func TestLifeCancelAfterTheDeadline(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{SweepEvery: -1})[0]
		p := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 2, 30*time.Millisecond)
		o := place(ctx, t, shop, p, "u1")
		waitDue(ctx, t, b, shop, o)
		if _, err := shop.Pay(ctx, o.ID); !errors.Is(err, order.ErrExpired) {
			t.Fatalf("Pay after the deadline: %v, want ErrExpired", err)
		}
		st, err := shop.Cancel(ctx, o.ID)
		if !errors.Is(err, order.ErrExpired) {
			t.Errorf("Cancel after the deadline (told expired already): %v, state %q; want ErrExpired", err, st.State)
		}
		if a := auditOf(ctx, t, shop, p); a.Stock != 2 {
			t.Errorf("stock %d, want 2", a.Stock)
		}
	})
}
