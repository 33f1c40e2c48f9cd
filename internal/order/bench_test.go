package order_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// BenchmarkPlace measures one hot product with 1 and with 64 concurrent
// buyers, each order by a different user, in one shop, and with 64 buyers
// spread over three shops (three Services, each with its own Redis clients,
// lockers and database pool, as three replicas of the shop would have):
//
//   - lua: the whole order flow (dedupe lock, product lock, read, check,
//     write, release) in lua mode, without simulated latency;
//   - fenced: the same with a fencing token, registered in the database
//     before the read (the read moves into the transaction);
//   - etcd: fenced's flow with the lock on the etcd cluster (the embedded
//     three members, or FLASHSALE_TEST_ETCD_ENDPOINTS's on real servers);
//   - lua+batch, fenced+batch, etcd+batch: the same strategies batched
//     (BatchMax 64): a holder of the product lock serves every buyer its
//     shop has queued in one transaction;
//   - sql-atomic: Place with no lock, the order row with its unique key and
//     a conditional UPDATE, in one transaction;
//   - redis-decr: Place reserving in Redis with one script, then the same
//     transaction as sql-atomic;
//   - redis-queue: Place answering 202, the units taken and the order
//     queued by one Redis script, while the shops' consumers write the
//     queue behind it (the accept rate, what a buyer waits for);
//   - redis-queue/drain: the consumers alone: how fast N orders accepted
//     beforehand are written, one transaction per batch (written
//     orders/s; buyers=1 is skipped: buyers only fill the queue);
//   - lockfree: the baseline without the order flow around it, the INSERT
//     of the order and then the conditional UPDATE products SET stock =
//     stock - ? WHERE id = ? AND stock >= ?, in one transaction: the hot
//     row's lock is taken by the last statement before the commit and held
//     as briefly as it can be.
//
// It reports orders/s and the 99th percentile latency (p99-ms). The stock
// is large enough never to sell out. It runs on the real servers when
// FLASHSALE_TEST_MYSQL_DSN and FLASHSALE_TEST_REDIS_ADDRS are set (without
// the fault-injecting proxies), on the embedded ones otherwise. Measured in
// the README ("What each costs", "One lease, many buyers") with:
//
//	go test -run '^$' -bench 'BenchmarkPlace/real' -benchtime 2s -count 3 ./internal/order | benchstat -col /flow -
//
// Measured so on MariaDB 10.11, five redis-server nodes and a three-member
// etcd 3.4 cluster, quiet 2-core VM, medians of three, orders/s (p99):
//
//	flow          1 buyer        64 buyers        64 buyers, 3 shops
//	lua            689 (2.5ms)      729 (112ms)      669 (288ms)
//	fenced         497 (3.5ms)      559 (139ms)      568 (336ms)
//	etcd           163 (15ms)       124 (586ms)      130 (622ms)
//	lua+batch      758 (2.2ms)   15,979 (8.9ms)    6,419 (42ms)
//	fenced+batch   576 (3.1ms)   15,455 (7.8ms)    5,432 (47ms)
//	etcd+batch     168 (15ms)     6,420 (22ms)     2,862 (95ms)
//	sql-atomic   1,247 (1.6ms)    1,883 (52ms)     2,098 (53ms)
//	redis-decr   1,031 (1.9ms)    1,947 (54ms)     1,615 (61ms)
//	lockfree     1,210 (1.8ms)    1,968 (50ms)     1,801 (58ms)
//
// Batched fenced at 64 buyers: 7.9× the lock-free baseline at 64 buyers
// with a sixth of its p99, 27.7× unbatched fenced; with one buyer, 1.16×
// unbatched. Over three shops: 3.0× the baseline, p99 47 ms against 58.
func BenchmarkPlace(b *testing.B) {
	for _, mode := range testenv.EnvModes(b) {
		// Each mode's backends live in its own sub-benchmark, so that a run
		// of the real ones (-bench 'BenchmarkPlace/real') does not start the
		// embedded ones, whose etcd members would tick in this process
		// throughout it.
		b.Run(string(mode), func(b *testing.B) { benchPlaceOn(b, mode) })
	}
}

// benchPlaceOn is BenchmarkPlace on the backends of mode.
func benchPlaceOn(b *testing.B, mode testenv.Mode) {
	env := testenv.NewEnv(b, mode).WithEtcd(b)
	fleet := make([]benchShop, 3)
	for i := range fleet {
		fleet[i] = newBenchShop(b, env)
	}
	flows := []struct {
		name  string
		strat strategy.Name
		batch int
	}{
		{"lua", strategy.Lua, 0},
		{"lua+batch", strategy.Lua, 64},
		{"fenced", strategy.Fenced, 0},
		{"fenced+batch", strategy.Fenced, 64},
		{"etcd", strategy.Etcd, 0},
		{"etcd+batch", strategy.Etcd, 64},
		{"sql-atomic", strategy.SQLAtomic, 0},
		{"redis-decr", strategy.RedisDecr, 0},
		{"redis-queue", strategy.RedisQueue, 0},       // the 202s: bench_queue_test.go
		{"redis-queue/drain", strategy.RedisQueue, 0}, // the consumers' writes: bench_queue_test.go
		{"lockfree", strategy.SQLAtomic, 0},           // any product will do: the baseline only UPDATEs it
	}
	runs := []struct {
		name          string
		shops, buyers int
	}{
		{"shops=1/buyers=1", 1, 1},
		{"shops=1/buyers=64", 1, 64},
		{"shops=3/buyers=64", 3, 64},
	}
	for _, flow := range flows {
		for _, run := range runs {
			b.Run(fmt.Sprintf("flow=%s/%s", flow.name, run.name), func(b *testing.B) {
				if flow.name == "redis-queue/drain" {
					benchDrain(b, env, fleet[:run.shops], run.buyers)
					return
				}
				product, err := fleet[0].shop.AddProduct(context.Background(), stock.Product{
					ID: env.Redis.Key("hot-" + strconv.FormatInt(products0.Add(1), 10)), Stock: stock.MaxStock,
					Strategy: flow.strat, LockTTL: 2 * time.Second, BatchMax: flow.batch})
				if err != nil {
					b.Fatal(err)
				}
				shops := fleet[:run.shops]
				var turn atomic.Int64
				measure(b, run.buyers, func(ctx context.Context) error {
					s := shops[int(turn.Add(1))%len(shops)]
					user := "u" + strconv.FormatInt(users.Add(1), 10)
					if flow.name == "lockfree" {
						return placeLockFree(ctx, s.db, product.ID, user, 1)
					}
					_, err := s.shop.Place(ctx, order.Request{UserID: user, ProductID: product.ID, Quantity: 1})
					return err
				})
				if flow.strat.Queues() {
					waitDrained(b, fleet[0].shop, product.ID) // untimed: the next flow starts clean
					forgetOrders(b, fleet[0].redis, product.ID)
				}
			})
		}
	}
}

// products0 and users number the benchmark's products and buyers.
var products0, users atomic.Int64

// placeLockFree is the lock-free baseline: the order row, then the
// conditional UPDATE that checks and deducts the stock in one statement, in
// one transaction, so no lock is needed for it. The UPDATE comes last so
// that the hot row's lock is held from it to the commit and no longer, as
// the engines built for hot rows advise. (It does not stop a buyer from
// ordering twice; that would take a unique key on (user, product).)
func placeLockFree(ctx context.Context, db *gorm.DB, product, user string, qty int) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Exec("INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at) VALUES (?, ?, ?, ?, ?, ?)",
			uuid.NewString(), user, product, qty, "lockfree", time.Now().UTC()).Error
		if err != nil {
			return err
		}
		res := tx.Exec("UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?", qty, product, qty)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return order.ErrSoldOut // and the INSERT rolls back with it
		}
		return nil
	})
}

// measure runs b.N orders spread over buyers goroutines and reports
// orders/s and p99 latency. Two orders per buyer run first, untimed, to fill
// the connection pools.
func measure(b *testing.B, buyers int, place func(ctx context.Context) error) {
	ctx := context.Background()
	var next atomic.Int64
	run := func(total int64) ([]time.Duration, error) {
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			all      = make([]time.Duration, 0, total)
			firstErr error
		)
		for range buyers {
			wg.Go(func() {
				var mine []time.Duration
				for n := next.Add(1); n <= total; n = next.Add(1) {
					start := time.Now()
					err := place(ctx)
					mine = append(mine, time.Since(start))
					if err != nil {
						mu.Lock()
						firstErr = cmpOr(firstErr, err)
						mu.Unlock()
					}
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			})
		}
		wg.Wait()
		return all, firstErr
	}

	warm := int64(2 * buyers)
	if _, err := run(warm); err != nil {
		b.Fatalf("warm-up: %v", err)
	}
	next.Store(0)
	b.ResetTimer()
	start := time.Now()
	lat, err := run(int64(b.N))
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatalf("order failed: %v", err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "orders/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
