package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestRedisOwedSweepNotHeldByAFrozenSettle: a shop froze in the middle of
// settling an owed row (a GC pause, SIGSTOP, a partition between it and
// the database: its transaction stays open, its row locked). Another
// shop's sweep must still pay the other products' owed returns: it
// should pass over a row another shop holds (FOR UPDATE SKIP LOCKED), not
// wait innodb_lock_wait_timeout (50 s by default) for it, on every tick,
// with every row behind it. MySQL and MariaDB only: SQLite's one writer
// is TestRedisSettleDoesNotStallOtherSales's.
func TestRedisOwedSweepNotHeldByAFrozenSettle(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		if b.DB.DB().Dialector.Name() == "sqlite" {
			t.Skip("one process holds SQLite's writer")
		}
		ctx := context.Background()
		shops := newShops(t, b, 2, order.Options{SweepEvery: -1})
		dying, alive := shops[0], shops[1]
		order.CrashAfterReturnCommit(dying)
		order.PayOwedAfter(alive, 0) // both rows due at once: no 2 s grace to wait out
		frozenP := payable(t, b, stock.Product{Strategy: strategy.RedisDecr}, 4, time.Minute)
		p := payable(t, b, stock.Product{Strategy: strategy.RedisDecr}, 4, time.Minute)
		// Two returns owed, frozenP's the older: the sweep reads it first.
		frozen := placeWritten(ctx, t, alive, frozenP, "u1")
		if _, err := dying.Cancel(ctx, frozen.ID); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		o := placeWritten(ctx, t, alive, p, "u1")
		if _, err := dying.Cancel(ctx, o.ID); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		// The frozen shop's settle of its row: the transaction open, the
		// row held (settleOwed's read), and then nothing.
		tx := b.DB.DB().Begin()
		var id string
		if err := tx.Raw("SELECT order_id FROM redis_owed WHERE order_id = ? FOR UPDATE", frozen.ID).Row().Scan(&id); err != nil {
			t.Fatalf("hold the row: %v", err)
		}
		swept := make(chan struct{})
		t.Cleanup(func() { tx.Rollback(); <-swept })
		go func() { // the shop's own sweep: a context with no deadline
			defer close(swept)
			tick := time.NewTicker(50 * time.Millisecond) // as the shop's own ticker paces it
			defer tick.Stop()
			for ; rowsOwed(t, b, p, false) != 0; <-tick.C {
				if _, err := alive.Sweep(ctx); err != nil {
					t.Logf("Sweep: %v", err)
				}
			}
		}()
		testenv.WaitFor(t, 20*time.Second, "the sweep to pay the return nobody holds", func() bool {
			return rowsOwed(t, b, p, false) == 0
		})
	})
}
