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

// TestRedisPayAtTheDeadline: TestLifePayAtTheDeadline for the rows whose
// stock lives in Redis too: one shop pays each order within a
// millisecond of its deadline (before, at, after) by the database's
// clock while another sweeps without a pause and a third cancels it.
// Each order ends as its answers said, and the units not paid are back
// once in both stores (the sweep's, or the cancel's, return; never
// both).
func TestRedisPayAtTheDeadline(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shops := newShops(t, b, 3, order.Options{SweepEvery: -1})
		payer, sweeper, canceller := shops[0], shops[1], shops[2]
		db := b.DB.DB()
		dbNow := func() int64 {
			var now int64
			if err := db.Raw("SELECT " + life.NowMs(db)).Row().Scan(&now); err != nil {
				t.Errorf("the database's now: %v", err)
			}
			return now
		}
		for _, row := range redisRows {
			t.Run(row.name, func(t *testing.T) {
				const n = 6
				p := payable(t, b, row.p, n, 300*time.Millisecond)
				var orders []order.Order
				for _, r := range buyers(p.ID, n) {
					orders = append(orders, placeWritten(ctx, t, payer, p, r.UserID))
				}
				stop := make(chan struct{})
				swept := make(chan struct{})
				go func() {
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
				paid := map[string]bool{}
				cancelled := map[string]bool{}
				var mu sync.Mutex
				var wg sync.WaitGroup
				for i, o := range orders {
					dl := stateOf(ctx, t, payer, o.ID).Deadline.UnixMilli()
					aim := dl - 1 + int64(i%3)
					wg.Go(func() {
						for dbNow() < aim {
						}
						_, err := payer.Pay(ctx, o.ID)
						if err != nil && !errors.Is(err, order.ErrExpired) && !errors.Is(err, order.ErrCancelled) {
							t.Errorf("Pay: %v", err)
						}
						mu.Lock()
						paid[o.ID] = err == nil
						mu.Unlock()
					})
					if i%2 == 0 {
						wg.Go(func() {
							for dbNow() < aim {
							}
							st, err := canceller.Cancel(ctx, o.ID)
							if err != nil && !errors.Is(err, order.ErrExpired) && !errors.Is(err, order.ErrAlreadyPaid) {
								t.Errorf("Cancel: %v", err)
							}
							mu.Lock()
							cancelled[o.ID] = err == nil && st.State == life.Cancelled
							mu.Unlock()
						})
					}
				}
				wg.Wait()
				testenv.WaitFor(t, 20*time.Second, "the unpaid orders to end and their returns to be paid", func() bool {
					for _, o := range orders {
						if stateOf(ctx, t, payer, o.ID).State == life.Pending {
							return false
						}
					}
					return owed(t, b) == 0
				})
				close(stop)
				<-swept
				sold := 0
				for _, o := range orders {
					st := stateOf(ctx, t, payer, o.ID).State
					if (st == life.Paid) != paid[o.ID] || (st == life.Cancelled) != cancelled[o.ID] {
						t.Errorf("order %s is %q; told paid=%v, cancelled=%v", o.ID, st, paid[o.ID], cancelled[o.ID])
					}
					if st == life.Paid {
						sold++
					}
				}
				checkStores(ctx, t, b, payer, p, n-sold)
				var returned int64
				for _, s := range shops {
					returned += s.Events(p.ID).Returned
				}
				if returned != int64(n-sold) {
					t.Errorf("returned %d, want %d", returned, n-sold)
				}
			})
		}
	})
}
