package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestNaiveExpiry: the read-then-write expiry by the shop's own clock
// (Options.NaiveExpiry) gets each textbook bug wrong, for its reason,
// where Sweep gets it right.
func TestNaiveExpiry(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		honest := newShops(t, b, 1, order.Options{SweepEvery: -1})[0]
		naive := newShops(t, b, 1, order.Options{SweepEvery: -1, NaiveExpiry: true})[0]
		t.Run("a payment between the read and the write", func(t *testing.T) {
			// The naive shop's clock runs ahead, so its read finds the
			// order due while the database still takes its payment.
			ahead := newShops(t, b, 1, order.Options{SweepEvery: -1, NaiveExpiry: true,
				Now: func() time.Time { return time.Now().Add(5 * time.Second) }})[0]
			p := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 1, 3*time.Second)
			o := place(ctx, t, honest, p, "u1")
			write, err := order.NaiveSweepSplit(ctx, ahead)
			if err != nil {
				t.Fatal(err)
			}
			if st, err := honest.Pay(ctx, o.ID); err != nil || st.State != life.Paid {
				t.Fatalf("Pay in time: %q, %v; want paid", st.State, err)
			}
			if k, err := write(); err != nil || k != 1 {
				t.Fatalf("the naive write: %d, %v; want 1", k, err)
			}
			if st := stateOf(ctx, t, honest, o.ID); st.State != life.Expired || stockOf(ctx, t, honest, p) != 1 {
				t.Errorf("after the naive write: %q, stock %d; want the paid order overwritten expired and its unit back on sale (the bug)", st.State, stockOf(ctx, t, honest, p))
			}
		})
		t.Run("two sweeps read the same order", func(t *testing.T) {
			p := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 1, 50*time.Millisecond)
			o := place(ctx, t, honest, p, "u2")
			waitDue(ctx, t, b, honest, o)
			first, err1 := order.NaiveSweepSplit(ctx, naive)
			second, err2 := order.NaiveSweepSplit(ctx, naive)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			first()
			second()
			a, err := honest.Audit(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if a.Stock != 2 || a.Oversold != 1 {
				t.Errorf("stock %d, oversold %d; want 2 of 1 unit on sale and 1 oversold: the unit returned twice", a.Stock, a.Oversold)
			}
			// The same race, the real way: one End wins, one unit back.
			q := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 1, 50*time.Millisecond)
			waitDue(ctx, t, b, honest, place(ctx, t, honest, q, "u3"))
			honest.Sweep(ctx)
			honest.Sweep(ctx)
			if a := auditOf(ctx, t, honest, q); a.Stock != 1 || a.Oversold != 0 {
				t.Errorf("Sweep: stock %d, oversold %d; want 1 and 0", a.Stock, a.Oversold)
			}
		})
		t.Run("a shop whose clock runs ahead", func(t *testing.T) {
			ahead := newShops(t, b, 1, order.Options{SweepEvery: -1, NaiveExpiry: true,
				Now: func() time.Time { return time.Now().Add(5 * time.Second) }})[0]
			p := payable(t, b, stock.Product{Strategy: strategy.SQLAtomic}, 1, 3*time.Second)
			o := place(ctx, t, honest, p, "u4")
			if k, err := ahead.Sweep(ctx); err != nil || k != 1 {
				t.Fatalf("the naive sweep ahead: %d, %v; want the order expired early (the bug)", k, err)
			}
			if _, err := honest.Pay(ctx, o.ID); err == nil {
				t.Errorf("a payment within the window after the early expiry: paid; want refused, the order gone")
			}
		})
	})
}
