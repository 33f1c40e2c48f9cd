package order_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestSweep: the sweep expires every unpaid order past its deadline
// exactly once, with many shops sweeping at once, through a shop killed
// mid-sweep, and by the database's clock whatever the shops' clocks say.
func TestSweep(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		t.Run("many shops at once", func(t *testing.T) {
			for _, template := range []stock.Product{
				{Strategy: strategy.SQLAtomic, Buckets: 4},
				{Strategy: strategy.Fenced},
			} {
				t.Run(string(template.Strategy), func(t *testing.T) {
					manySweepers(ctx, t, b, template)
				})
			}
		})
		t.Run("a shop killed mid-sweep", func(t *testing.T) {
			killedMidSweep(ctx, t, b)
		})
		t.Run("shops whose clocks are off", func(t *testing.T) {
			clocksOff(ctx, t, b)
		})
	})
}

// manySweepers lets six shops sweep the same due orders at once, each
// its own sweep every few milliseconds and a hand-run Sweep besides:
// every unit comes back once.
func manySweepers(ctx context.Context, t *testing.T, b *testenv.Env, template stock.Product) {
	const n = 24
	shops := newShops(t, b, 6, order.Options{SweepEvery: 5 * time.Millisecond})
	p := payable(t, b, template, n, 50*time.Millisecond)
	for i, r := range buyers(p.ID, n) {
		place(ctx, t, shops[i%len(shops)], p, r.UserID)
	}
	var byHand atomic.Int64
	failures := make(chan error, len(shops))
	var wg sync.WaitGroup
	for _, s := range shops {
		wg.Go(func() {
			for stockOf(ctx, t, s, p) < n {
				k, err := s.Sweep(ctx)
				if err != nil {
					failures <- err
					return
				}
				byHand.Add(int64(k))
			}
		})
	}
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Errorf("Sweep: %v", err)
	}
	var expired, returned int64
	for _, s := range shops {
		expired += s.Events(p.ID).Expired
		returned += s.Events(p.ID).Returned
	}
	if expired != n || returned != n {
		t.Errorf("expired %d, returned %d (%d by the hand-run sweeps); want %d each", expired, returned, byHand.Load(), n)
	}
	if a := auditOf(ctx, t, shops[0], p); a.Stock != n || a.Orders != 0 {
		t.Errorf("stock %d, live orders %d; want %d and 0", a.Stock, a.Orders, n)
	}
}

// errKilled is the death of a shop between its sweep's statements and
// its COMMIT: the database rolls the transaction back.
var errKilled = errors.New("test: shop killed before its sweep committed")

// killedMidSweep kills a shop's sweep after it expired an order and gave
// its unit back, before the COMMIT: nothing of it stays, and another
// shop's sweep expires the order, once.
func killedMidSweep(ctx context.Context, t *testing.T, b *testenv.Env) {
	pool, _ := b.DB.OpenPool(t)
	var kills atomic.Int64
	err := pool.Callback().Raw().After("gorm:raw").Register("test:kill_after_give", func(db *gorm.DB) {
		if strings.HasPrefix(db.Statement.SQL.String(), "UPDATE products SET stock = stock +") {
			kills.Add(1)
			_ = db.AddError(errKilled)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	doomed := shopOn(t, b, pool, order.Options{SweepEvery: -1})
	other := newShops(t, b, 1, order.Options{SweepEvery: -1})[0]
	p := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 2, 30*time.Millisecond)
	o := place(ctx, t, other, p, "u1")
	waitDue(ctx, t, b, other, o)
	if _, err := doomed.Sweep(ctx); !errors.Is(err, errKilled) || kills.Load() != 1 {
		t.Fatalf("the doomed sweep: %v after %d kills; want errKilled after 1", err, kills.Load())
	}
	if st := stateOf(ctx, t, other, o.ID); st.State != life.Pending || stockOf(ctx, t, other, p) != 1 {
		t.Fatalf("after the killed sweep: %q, stock %d; want pending and 1, as before it", st.State, stockOf(ctx, t, other, p))
	}
	if k, err := other.Sweep(ctx); err != nil || k != 1 {
		t.Fatalf("the next sweep: %d, %v; want 1 expired", k, err)
	}
	if k, err := other.Sweep(ctx); err != nil || k != 0 {
		t.Errorf("a sweep after it: %d, %v; want nothing left", k, err)
	}
	if a := auditOf(ctx, t, other, p); a.Stock != 2 {
		t.Errorf("stock %d, want 2: the unit back once", a.Stock)
	}
}

// clocksOff runs two shops whose clocks are 5 s ahead and 5 s behind the
// database's: the one ahead expires nothing early, and an order expires
// when the database says, whichever shop sweeps or placed it.
func clocksOff(ctx context.Context, t *testing.T, b *testenv.Env) {
	const off = 5 * time.Second
	ahead := newShops(t, b, 1, order.Options{SweepEvery: -1, Now: func() time.Time { return time.Now().Add(off) }})[0]
	behind := newShops(t, b, 1, order.Options{SweepEvery: -1, Now: func() time.Time { return time.Now().Add(-off) }})[0]
	p := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 3, time.Second)
	paid, unpaid := place(ctx, t, behind, p, "u1"), place(ctx, t, behind, p, "u2")
	deadline := stateOf(ctx, t, ahead, unpaid.ID).Deadline
	if k, err := ahead.Sweep(ctx); err != nil || k != 0 {
		t.Fatalf("the shop ahead swept %d, %v, within the pay window; want 0", k, err)
	}
	if _, err := ahead.Pay(ctx, paid.ID); err != nil {
		t.Fatalf("Pay on the shop ahead, within the window: %v", err)
	}
	db := b.DB.DB()
	testenv.WaitFor(t, 10*time.Second, "the shop ahead to expire the unpaid order", func() bool {
		k, err := ahead.Sweep(ctx)
		if err != nil {
			t.Fatalf("Sweep: %v", err)
		}
		var now int64
		if err := db.Raw("SELECT " + life.NowMs(db)).Row().Scan(&now); err != nil {
			t.Fatalf("the database's now: %v", err)
		}
		if k > 0 && now < deadline.UnixMilli() { // due at its deadline: life.Due takes deadline_ms <= now
			t.Fatalf("expired at %d, before its deadline %d by the database's clock", now, deadline.UnixMilli())
		}
		return k > 0
	})
	if st := stateOf(ctx, t, behind, paid.ID); st.State != life.Paid {
		t.Errorf("the paid order is %q, want paid", st.State)
	}
	if a := auditOf(ctx, t, behind, p); a.Stock != 2 || a.Sold != 1 {
		t.Errorf("stock %d, sold %d; want 2 and 1", a.Stock, a.Sold)
	}
}
