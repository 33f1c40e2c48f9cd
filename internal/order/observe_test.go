package order_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// recorder is an Observer that keeps the outcomes it hears.
type recorder struct {
	mu             sync.Mutex
	placed, waited []string
}

func (r *recorder) Placed(_ strategy.Name, o string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.placed = append(r.placed, o)
}

func (r *recorder) LockWaited(_ strategy.Name, o string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waited = append(r.waited, o)
}

func (r *recorder) Held(strategy.Name, time.Duration)   {}
func (r *recorder) Happened(strategy.Name, order.Event) {}
func (r *recorder) Batched(strategy.Name, int)          {}

// TestHangUpInTheLockWaitIsCanceled: a buyer who hangs up while queued for
// the product lock, well within the lock wait, is counted canceled, not
// lock_timeout: the lock wait did not run out.
func TestHangUpInTheLockWaitIsCanceled(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		rec := &recorder{}
		holding := make(chan struct{})
		h := &hookSleep{hook: func(context.Context) { close(holding) }}
		h.armed.Store(true)
		shop := newShops(t, b, 1, order.Options{Observer: rec, LockWait: 5 * time.Second, Sleep: h.Sleep})[0]
		p := newProduct(t, b, "hangup", stock.Product{Strategy: strategy.Lua, Stock: 5,
			LockTTL: 2 * time.Second, Work: 600 * time.Millisecond})
		var wg sync.WaitGroup
		wg.Go(func() {
			shop.Place(context.Background(), order.Request{UserID: "holder", ProductID: p.ID, Quantity: 1})
		})
		<-holding // the holder works, holding the product lock
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel) // an HTTP client hangs up
		if _, err := shop.Place(ctx, order.Request{UserID: "gone", ProductID: p.ID, Quantity: 1}); err == nil {
			t.Fatal("the buyer who hung up got an order")
		}
		wg.Wait()
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if !slices.Contains(rec.placed, "canceled") || slices.Contains(rec.placed, "lock_timeout") {
			t.Errorf("orders counted %v, want the one who hung up as canceled", rec.placed)
		}
		if !slices.Contains(rec.waited, "canceled") || slices.Contains(rec.waited, "lock_timeout") {
			t.Errorf("lock asks counted %v, want the one who hung up as canceled", rec.waited)
		}
	})
}
