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
)

// TestBuyAgain: one live order per buyer. A buyer whose order is pending
// or paid cannot buy again; one whose order was cancelled or expired
// can, once, however many clicks they send (the two-clicks lesson: the
// dedupe lock, the unique key, a batch's own check); and ids stay
// case-sensitive ("Carol" and "carol" are two buyers).
func TestBuyAgain(t *testing.T) {
	lifeBackends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t)
		ctx := context.Background()
		// The shops sweep when told to: an order of the clicks after an
		// expiry must not expire while its buyer still clicks.
		shops := newShops(t, b, 3, order.Options{SweepEvery: -1})
		for _, row := range lifeStrategies(true) {
			t.Run(row.name, func(t *testing.T) {
				p := payable(t, b, row.p, 20, time.Minute)
				o := place(ctx, t, shops[0], p, "Carol")
				again := func(user string) error {
					_, err := shops[1].Place(ctx, order.Request{UserID: user, ProductID: p.ID, Quantity: 1})
					return err
				}
				if err := again("Carol"); !errors.Is(err, order.ErrDuplicateOrder) {
					t.Errorf("pending, again: %v, want ErrDuplicateOrder", err)
				}
				place(ctx, t, shops[2], p, "carol") // another buyer
				if _, err := shops[2].Pay(ctx, o.ID); err != nil {
					t.Fatalf("Pay: %v", err)
				}
				if err := again("Carol"); !errors.Is(err, order.ErrDuplicateOrder) {
					t.Errorf("paid, again: %v, want ErrDuplicateOrder", err)
				}
				mine := place(ctx, t, shops[0], p, "dave")
				for range 2 { // and buy again after the second order's cancel too
					if _, err := shops[1].Cancel(ctx, mine.ID); err != nil {
						t.Fatalf("Cancel: %v", err)
					}
					var got []order.Order
					if mine, got = clicksAfter(ctx, t, shops, p.ID, "dave"); len(got) != 1 {
						t.Fatalf("after a cancel, %d of dave's clicks bought; want 1", len(got))
					}
					if err := again("dave"); !errors.Is(err, order.ErrDuplicateOrder) {
						t.Errorf("bought again, then again: %v, want ErrDuplicateOrder", err)
					}
					if err := again("Carol"); !errors.Is(err, order.ErrDuplicateOrder) {
						t.Errorf("carol's order is not Carol's: %v, want ErrDuplicateOrder", err)
					}
				}
				short := payable(t, b, row.p, 2, 30*time.Millisecond)
				gone := place(ctx, t, shops[0], short, "erin")
				waitDue(ctx, t, b, shops[0], gone)
				if _, err := shops[1].Sweep(ctx); err != nil { // and the earlier rows' erins
					t.Fatalf("Sweep: %v", err)
				}
				if st := stateOf(ctx, t, shops[0], gone.ID); st.State != life.Expired {
					t.Fatalf("erin's order is %q, want expired", st.State)
				}
				if _, got := clicksAfter(ctx, t, shops, short.ID, "erin"); len(got) != 1 {
					t.Errorf("after an expiry, %d of erin's clicks bought; want 1", len(got))
				}
				if a := auditOf(ctx, t, shops[0], p); a.DuplicateOrders != 0 {
					t.Errorf("%d duplicate live orders, want 0", a.DuplicateOrders)
				}
			})
		}
	})
}

// clicksAfter sends five clicks of user for one unit of product at once,
// spread over shops, and returns the orders they bought, and one of them
// (the zero Order if none). A click refused as a
// duplicate (order or request in flight) is the lesson; anything else
// fails the test.
func clicksAfter(ctx context.Context, t *testing.T, shops []*order.Service, product, user string) (order.Order, []order.Order) {
	t.Helper()
	bought := make(chan order.Order, 5)
	failures := make(chan error, 5)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, req := range clicks(product, user, 5) {
		wg.Go(func() {
			<-start
			o, err := shops[i%len(shops)].Place(ctx, req)
			switch {
			case err == nil:
				bought <- o
			case errors.Is(err, order.ErrDuplicateOrder), errors.Is(err, order.ErrDuplicateRequest):
			default:
				failures <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(failures)
	close(bought)
	for err := range failures {
		t.Errorf("click by %s: %v", user, err)
	}
	var all []order.Order
	for o := range bought {
		all = append(all, o)
	}
	if len(all) == 0 {
		return order.Order{}, nil
	}
	return all[0], all
}
