package order_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm/logger"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// What the database's own locks cost, measured in one shop (one database
// pool) on the embedded and, where the test variables name them, the real
// servers:
//
//	go test -run '^$' -bench 'BenchmarkRowLockPool|BenchmarkVersionCrowd' -count 3 ./internal/order | benchstat -
//
// scripts/results/database-locks.sh writes the figures to
// docs/results/database-locks.md.

// dbLockWork is the business work of the hot product's orders: long
// enough that holding a row lock across it shows.
const dbLockWork = 5 * time.Millisecond

// BenchmarkRowLockPool: while a crowd of buyers (0, 16, 64, 128) keeps
// buying a hot product, another product (sql-atomic, no work) sells to
// four buyers in the same shop; b.N is the other product's orders. Under
// sql-for-update every buyer of the hot product holds a pooled connection
// while it waits for the row, and the holder keeps its own across the
// work; under sql-atomic the work runs before the transaction and the row
// is held only from the UPDATE to the commit. It reports the other
// product's orders/s and p99 (other-p99-ms), the hot product's orders/s
// (hot-orders/s), and the other product's waits for a pooled connection
// per order (pool-waits/op).
func BenchmarkRowLockPool(b *testing.B) {
	for _, mode := range testenv.EnvModes(b) {
		b.Run(string(mode), func(b *testing.B) {
			env := testenv.NewEnv(b, mode).WithEtcd(b)
			bs := quietBenchShop(b, env)
			for _, hot := range []strategy.Name{strategy.SQLForUpdate, strategy.SQLAtomic} {
				for _, crowd := range []int{0, 16, 64, 128} {
					b.Run(fmt.Sprintf("hot=%s/crowd=%d", hot, crowd), func(b *testing.B) {
						benchRowLockPool(b, env, bs, hot, crowd)
					})
				}
			}
		})
	}
}

func benchRowLockPool(b *testing.B, env *testenv.Env, bs benchShop, hot strategy.Name, crowd int) {
	ctx, stop := context.WithCancel(context.Background())
	hotP := benchProduct(b, env, bs, stock.Product{Strategy: hot, Work: dbLockWork})
	other := benchProduct(b, env, bs, stock.Product{Strategy: strategy.SQLAtomic})

	// The crowd buys the hot product until the measurement ends.
	var hotOrders atomic.Int64
	var wg sync.WaitGroup
	for range crowd {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := bs.shop.Place(ctx, benchRequest(hotP.ID)); err == nil {
					hotOrders.Add(1)
				}
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	time.Sleep(200 * time.Millisecond) // the crowd has queued on the row

	sqlDB, err := bs.db.DB()
	if err != nil {
		b.Fatal(err)
	}
	waits, hot0 := sqlDB.Stats().WaitCount, hotOrders.Load()
	var mu sync.Mutex
	var lat []time.Duration
	var next atomic.Int64
	var failed atomic.Value
	b.ResetTimer()
	start := time.Now()
	var buyers sync.WaitGroup
	for range 4 {
		buyers.Go(func() {
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				t0 := time.Now()
				_, err := bs.shop.Place(context.Background(), benchRequest(other.ID))
				d := time.Since(t0)
				if err != nil {
					failed.CompareAndSwap(nil, err)
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	buyers.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("the other product's order: %v", err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "orders/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "other-p99-ms")
	b.ReportMetric(float64(hotOrders.Load()-hot0)/elapsed.Seconds(), "hot-orders/s")
	b.ReportMetric(float64(sqlDB.Stats().WaitCount-waits)/float64(b.N), "pool-waits/op")
}

// BenchmarkVersionCrowd: a crowd of buyers (1, 4, 16, 64) buys one hot
// product whose orders do dbLockWork of work, each buyer a fresh user per
// order and trying again at once when told ErrVersionConflict, as a client
// honouring Retry-After would, only sooner; b.N is the orders created. It
// reports orders/s, the tries per order that reached the write
// (tries/order: created plus version_moved, over created), the work
// thrown away per order (wasted-ms/order), and the buyers outrun on every
// try per order (conflicts/order). sql-for-update and sql-atomic run the
// same crowd for comparison.
func BenchmarkVersionCrowd(b *testing.B) {
	for _, mode := range testenv.EnvModes(b) {
		b.Run(string(mode), func(b *testing.B) {
			env := testenv.NewEnv(b, mode).WithEtcd(b)
			bs := quietBenchShop(b, env)
			for _, s := range []strategy.Name{strategy.SQLVersion, strategy.SQLForUpdate, strategy.SQLAtomic} {
				for _, crowd := range []int{1, 4, 16, 64} {
					b.Run(fmt.Sprintf("strategy=%s/crowd=%d", s, crowd), func(b *testing.B) {
						benchVersionCrowd(b, env, bs, s, crowd)
					})
				}
			}
		})
	}
}

func benchVersionCrowd(b *testing.B, env *testenv.Env, bs benchShop, s strategy.Name, crowd int) {
	p := benchProduct(b, env, bs, stock.Product{Strategy: s, Work: dbLockWork})
	var created, conflicts atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range crowd {
		wg.Go(func() {
			for created.Load() < int64(b.N) {
				_, err := bs.shop.Place(context.Background(), benchRequest(p.ID))
				switch {
				case err == nil:
					created.Add(1)
				case errors.Is(err, order.ErrVersionConflict):
					conflicts.Add(1)
				default:
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("order: %v", err)
	}
	n, moved := float64(created.Load()), float64(bs.shop.Events(p.ID).VersionMoved)
	b.ReportMetric(n/elapsed.Seconds(), "orders/s")
	b.ReportMetric((n+moved)/n, "tries/order")
	b.ReportMetric(moved*float64(dbLockWork.Milliseconds())/n, "wasted-ms/order")
	b.ReportMetric(float64(conflicts.Load())/n, "conflicts/order")
}

// quietBenchShop is newBenchShop with its database's log of slow
// statements silenced: here a statement is slow because it waited for a
// pooled connection, which is what is measured, and its lines would cut
// the benchmark's own in two.
func quietBenchShop(b *testing.B, env *testenv.Env) benchShop {
	bs := newBenchShop(b, env)
	bs.db.Logger = bs.db.Logger.LogMode(logger.Silent)
	return bs
}

// benchProduct creates a product of p's strategy and work on bs's shop
// that never sells out.
func benchProduct(b *testing.B, env *testenv.Env, bs benchShop, p stock.Product) stock.Product {
	p.ID = env.Redis.Key("db-" + string(p.Strategy) + "-" + strconv.FormatInt(products0.Add(1), 10))
	p.Stock = stock.MaxStock
	got, err := bs.shop.AddProduct(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	return got
}

// benchRequest is one unit of product for a buyer who has not bought yet.
func benchRequest(product string) order.Request {
	return order.Request{UserID: "u" + strconv.FormatInt(users.Add(1), 10), ProductID: product, Quantity: 1}
}
