package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// A buyer whose ctx ends while its batch waits for the database or does
// the work is withdrawn, as it would be unbatched: it hears ctx's error at
// once and nothing is written for it. (A cold review found it written,
// and answered only when the batch's work was done.)
func TestBatchBuyerGivesUpDuringItsBatch(t *testing.T) {
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
				// The batch goes on without it: wait for its work to end.
				time.Sleep(time.Second)
				if a := audit(t, shop, p.ID); a.Orders != 0 || a.Stock != 5 {
					t.Errorf("%s, batch_max %d: %d orders written, stock %d, want none for a buyer who gave up", s, batch, a.Orders, a.Stock)
				}
			}
		}
	})
}
