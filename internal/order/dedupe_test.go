package order_test

import (
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestDedupe: one buyer clicks ten times at once. Every safe strategy
// places one order and answers the other clicks duplicate_request (still
// in flight, the dedupe lock) or duplicate_order (already bought: the
// check under the lock, the unique key of sql-atomic, the buyer check of
// redis-decr's script, which comes before its decrement, so no click takes
// a unit it then does not sell); off places duplicates.
func TestDedupe(t *testing.T) {
	const clickCount = 10
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t)
		for _, mode := range append(safe, strategy.Off) {
			t.Run(string(mode), func(t *testing.T) {
				shops := newShops(t, b, 3, order.Options{LockWait: 10 * time.Second})
				// The work keeps every click's critical section open long
				// enough for the others to arrive.
				p := newProduct(t, b, "dedupe-"+string(mode), stock.Product{Strategy: mode, Stock: 100,
					LockTTL: time.Second, Work: 50 * time.Millisecond})

				out := rush(t, shops, clicks(p.ID, "alice", clickCount))
				a := audit(t, shops[0], p.ID)

				if mode == strategy.Off {
					if a.DuplicateOrders <= 0 {
						t.Errorf("off: audit duplicate orders: got %d, want > 0 (audit %+v)", a.DuplicateOrders, a)
					}
					return
				}
				placed := int(out.ok.Load())
				if placed != 1 {
					t.Errorf("orders placed: got %d, want 1", placed)
				}
				if got := int(out.dupRequest.Load() + out.dupOrder.Load()); got != clickCount-placed {
					t.Errorf("duplicate answers: got %d, want %d", got, clickCount-placed)
				}
				want := order.Audit{ProductID: p.ID, Strategy: mode, InitialStock: 100, Stock: 100 - placed,
					Orders: placed, Sold: placed, Consistent: true}
				checkExact(t, a, want)
			})
		}
	})
}
