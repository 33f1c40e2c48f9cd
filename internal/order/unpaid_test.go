package order_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestPay: a pending order is paid before its deadline, twice with the
// same answer, and not after it, when its unit goes back once.
func TestPay(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{})[0]
		t.Run("before the deadline, twice", func(t *testing.T) {
			p := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 3, time.Minute)
			o := place(ctx, t, shop, p, "u1")
			st := stateOf(ctx, t, shop, o.ID)
			if st.State != life.Pending || st.Deadline.IsZero() {
				t.Fatalf("placed: state %q, deadline %v; want pending with a deadline", st.State, st.Deadline)
			}
			for i := range 2 {
				got, err := shop.Pay(ctx, o.ID)
				if err != nil || got.State != life.Paid || !got.Deadline.IsZero() {
					t.Fatalf("Pay #%d: %v, state %q, deadline %v; want paid, no deadline", i+1, err, got.State, got.Deadline)
				}
			}
			if got, want := shop.Events(p.ID).Paid, int64(1); got != want {
				t.Errorf("Events.Paid = %d, want %d (the second payment changed nothing)", got, want)
			}
			if a := auditOf(ctx, t, shop, p); a.Sold != 1 {
				t.Errorf("sold %d, want 1", a.Sold)
			}
		})
		t.Run("after the deadline", func(t *testing.T) {
			p := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 3, 50*time.Millisecond)
			o := place(ctx, t, shop, p, "u1")
			waitDue(ctx, t, b, shop, o)
			if _, err := shop.Pay(ctx, o.ID); !errors.Is(err, order.ErrExpired) {
				t.Errorf("Pay after the deadline: %v, want ErrExpired", err)
			}
			testenv.WaitFor(t, 10*time.Second, "the sweep to give the unit back", func() bool {
				return stockOf(ctx, t, shop, p) == 3
			})
			if _, err := shop.Pay(ctx, o.ID); !errors.Is(err, order.ErrExpired) {
				t.Errorf("Pay after the sweep: %v, want ErrExpired", err)
			}
			if st := stateOf(ctx, t, shop, o.ID); st.State != life.Expired {
				t.Errorf("state %q, want expired", st.State)
			}
			if a := auditOf(ctx, t, shop, p); a.Stock != 3 || a.Sold != 0 {
				t.Errorf("stock %d, sold %d; want 3 and 0: the unit back once", a.Stock, a.Sold)
			}
		})
		t.Run("without a pay window", func(t *testing.T) {
			p := newProduct(t, b, "final", stock.Product{Strategy: strategy.SQLAtomic, Stock: 3})
			o := place(ctx, t, shop, p, "u1")
			if st := stateOf(ctx, t, shop, o.ID); st.State != life.Paid || !st.Deadline.IsZero() {
				t.Errorf("state %q, deadline %v; want paid at once, no deadline", st.State, st.Deadline)
			}
			if st, err := shop.Pay(ctx, o.ID); err != nil || st.State != life.Paid {
				t.Errorf("Pay: %v, %q; want paid", err, st.State)
			}
			if _, err := shop.Cancel(ctx, o.ID); !errors.Is(err, order.ErrAlreadyPaid) {
				t.Errorf("Cancel: %v, want ErrAlreadyPaid", err)
			}
		})
		t.Run("unknown order", func(t *testing.T) {
			if _, err := shop.Pay(ctx, randomID()); !errors.Is(err, stock.ErrNotFound) {
				t.Errorf("Pay: %v, want stock.ErrNotFound", err)
			}
		})
	})
}

// TestCancel, on every strategy whose stock lives in the database: a
// cancel puts the unit back where it came from (the product's row, its
// bucket), once; a paid order cannot be cancelled; and of cancels and
// sweeps racing for one order, exactly one gives the unit back.
func TestCancel(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t)
		ctx := context.Background()
		// The shops sweep only when told to, so that the race is theirs.
		shops := newShops(t, b, 3, order.Options{SweepEvery: -1})
		for _, row := range lifeStrategies(true) {
			t.Run(row.name, func(t *testing.T) {
				t.Run("pending, twice", func(t *testing.T) {
					p := payable(t, b, row.p, 4, time.Minute)
					o := place(ctx, t, shops[0], p, "u1")
					for i := range 2 {
						st, err := shops[i].Cancel(ctx, o.ID)
						if err != nil || st.State != life.Cancelled {
							t.Fatalf("Cancel #%d: %v, state %q; want cancelled", i+1, err, st.State)
						}
					}
					a := auditOf(ctx, t, shops[0], p)
					if a.Stock != 4 || a.Sold != 0 {
						t.Errorf("stock %d, sold %d; want 4 and 0", a.Stock, a.Sold)
					}
					if o.Bucket != nil && a.Buckets[*o.Bucket].Stock != a.Buckets[*o.Bucket].InitialStock {
						t.Errorf("bucket %d: stock %d, want its %d back", *o.Bucket, a.Buckets[*o.Bucket].Stock, a.Buckets[*o.Bucket].InitialStock)
					}
					if _, err := shops[0].Pay(ctx, o.ID); !errors.Is(err, order.ErrCancelled) {
						t.Errorf("Pay of a cancelled order: %v, want ErrCancelled", err)
					}
				})
				t.Run("paid", func(t *testing.T) {
					p := payable(t, b, row.p, 4, time.Minute)
					o := place(ctx, t, shops[0], p, "u1")
					if _, err := shops[1].Pay(ctx, o.ID); err != nil {
						t.Fatalf("Pay: %v", err)
					}
					if _, err := shops[2].Cancel(ctx, o.ID); !errors.Is(err, order.ErrAlreadyPaid) {
						t.Errorf("Cancel: %v, want ErrAlreadyPaid", err)
					}
					if a := auditOf(ctx, t, shops[0], p); a.Stock != 3 {
						t.Errorf("stock %d, want 3", a.Stock)
					}
				})
				t.Run("cancels and sweeps racing", func(t *testing.T) {
					raceEnds(ctx, t, b, shops, row.p)
				})
			})
		}
	})
}

// raceEnds places orders of a product made from template and, once they
// are due, lets two cancels per order and a sweep per shop race for them:
// every unit goes back exactly once, whoever wins each order.
func raceEnds(ctx context.Context, t *testing.T, b *testenv.Env, shops []*order.Service, template stock.Product) {
	t.Helper()
	const n = 4
	p := payable(t, b, template, n, 30*time.Millisecond)
	var orders []order.Order
	for _, r := range buyers(p.ID, n) {
		orders = append(orders, place(ctx, t, shops[0], p, r.UserID))
	}
	before := make([]order.Events, len(shops))
	for i, s := range shops {
		before[i] = s.Events(p.ID)
	}
	var cancelled, refused atomic.Int64
	failures := make(chan error, 2*n+len(shops))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, o := range orders {
		for j := range 2 {
			wg.Go(func() {
				<-start
				_, err := shops[(i+j)%len(shops)].Cancel(ctx, o.ID)
				switch {
				case err == nil:
					cancelled.Add(1)
				case errors.Is(err, order.ErrExpired):
					refused.Add(1)
				default:
					failures <- err
				}
			})
		}
	}
	for _, s := range shops {
		wg.Go(func() {
			<-start
			if _, err := s.Sweep(ctx); err != nil {
				failures <- err
			}
		})
	}
	waitDue(ctx, t, b, shops[0], orders...)
	close(start)
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Errorf("cancel or sweep: %v", err)
	}
	testenv.WaitFor(t, 10*time.Second, "every order to end", func() bool {
		for _, o := range orders {
			if stateOf(ctx, t, shops[0], o.ID).State == life.Pending {
				return false
			}
		}
		return true
	})
	var returned int64
	for i, s := range shops {
		returned += s.Events(p.ID).Returned - before[i].Returned
	}
	if returned != n {
		t.Errorf("units returned %d, want %d: one per order", returned, n)
	}
	if a := auditOf(ctx, t, shops[0], p); a.Stock != n || a.Sold != 0 {
		t.Errorf("stock %d, sold %d; want %d and 0 (cancels won %d orders' races)", a.Stock, a.Sold, n, cancelled.Load())
	}
}

// TestPayRacingExpiry: payments sent right around their deadline while
// three shops sweep without a pause: each order ends paid (its unit sold)
// or expired (its unit back), never both, whichever comes first by the
// database's clock.
func TestPayRacingExpiry(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		const n = 12
		shops := newShops(t, b, 3, order.Options{SweepEvery: time.Millisecond})
		p := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, n, 40*time.Millisecond)
		var orders []order.Order
		for _, r := range buyers(p.ID, n) {
			orders = append(orders, place(ctx, t, shops[0], p, r.UserID))
		}
		var paid, late atomic.Int64
		failures := make(chan error, n)
		var wg sync.WaitGroup
		for i, o := range orders {
			wg.Go(func() {
				// When the payment is sent, not a wait for a condition:
				// spread over 30..50 ms after the orders, some before
				// the deadline, some at it, some after.
				time.Sleep(30*time.Millisecond + time.Duration(i)*20*time.Millisecond/n)
				_, err := shops[i%len(shops)].Pay(ctx, o.ID)
				switch {
				case err == nil:
					paid.Add(1)
				case errors.Is(err, order.ErrExpired):
					late.Add(1)
				default:
					failures <- err
				}
			})
		}
		wg.Wait()
		close(failures)
		for err := range failures {
			t.Errorf("Pay: %v", err)
		}
		testenv.WaitFor(t, 10*time.Second, "every unpaid order to expire", func() bool {
			return stockOf(ctx, t, shops[0], p) == int(late.Load())
		})
		for _, o := range orders {
			if st := stateOf(ctx, t, shops[0], o.ID).State; st != life.Paid && st != life.Expired {
				t.Errorf("order %s is %q, want paid or expired", o.ID, st)
			}
		}
		if a := auditOf(ctx, t, shops[0], p); int64(a.Sold) != paid.Load() {
			t.Errorf("sold %d, paid %d (late %d): a unit paid and returned both, or neither", a.Sold, paid.Load(), late.Load())
		}
	})
}
