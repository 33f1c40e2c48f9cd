package order_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/reserve"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// BenchmarkPlace measures one hot product with 1 and with 64 concurrent
// buyers, each order by a different user:
//
//   - lua: the whole order flow (dedupe lock, product lock, read, check,
//     write, release) in lua mode, without simulated latency;
//   - fenced: the same with a fencing token, registered in the database
//     before the read (the read moves into the transaction);
//   - sql-atomic: Place with no lock, a conditional UPDATE and the order
//     row with its unique key, in one transaction;
//   - redis-decr: Place reserving in Redis with one script, then the same
//     transaction as sql-atomic;
//   - lockfree: the baseline without the order flow around it, the
//     conditional UPDATE products SET stock = stock - ? WHERE id = ? AND
//     stock >= ? plus the INSERT in one transaction.
//
// It reports orders/s and the 99th percentile latency (p99-ms). The stock
// is large enough never to sell out. It runs on the real servers when
// FLASHSALE_TEST_MYSQL_DSN and FLASHSALE_TEST_REDIS_ADDRS are set (without
// the fault-injecting proxies), on the embedded ones otherwise:
//
//	go test -run '^$' -bench BenchmarkPlace -benchtime 3s ./internal/order
func BenchmarkPlace(b *testing.B) {
	for _, mode := range testenv.EnvModes(b) {
		env := testenv.NewEnv(b, mode)
		db := benchDB(b, env)
		clients := benchClients(b, env)
		lockers := map[dlock.Mode]dlock.Locker{}
		for _, m := range []dlock.Mode{dlock.ModeLua, dlock.ModeFenced} {
			l, err := dlock.New(m, clients)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { l.Close() })
			lockers[m] = l
		}
		products := stock.NewStore(db)
		shop := order.NewService(db, products, lockers, order.Options{
			LockWait: 10 * time.Second, Logger: slog.New(slog.DiscardHandler),
			Reservations: reserve.New(clients[0]),
		})

		newHot := func(b *testing.B, name strategy.Name) string {
			p, err := shop.AddProduct(context.Background(), stock.Product{
				ID: env.Redis.Key("hot-" + strconv.FormatInt(products0.Add(1), 10)), Stock: stock.MaxStock,
				Strategy: name, LockTTL: 2 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			return p.ID
		}
		place := func(ctx context.Context, product, user string) error {
			_, err := shop.Place(ctx, order.Request{UserID: user, ProductID: product, Quantity: 1})
			return err
		}
		flows := []struct {
			name  strategy.Name
			place func(ctx context.Context, product, user string) error
		}{
			{strategy.Lua, place},
			{strategy.Fenced, place},
			{strategy.SQLAtomic, place},
			{strategy.RedisDecr, place},
			{"lockfree", func(ctx context.Context, product, user string) error {
				return placeLockFree(ctx, db, product, user, 1)
			}},
		}
		for _, flow := range flows {
			for _, buyers := range []int{1, 64} {
				b.Run(fmt.Sprintf("%s/%s/buyers=%d", mode, flow.name, buyers), func(b *testing.B) {
					name := flow.name
					if name == "lockfree" {
						name = strategy.SQLAtomic // any product will do: the baseline only UPDATEs it
					}
					product := newHot(b, name)
					measure(b, buyers, func(ctx context.Context) error {
						return flow.place(ctx, product, "u"+strconv.FormatInt(users.Add(1), 10))
					})
				})
			}
		}
	}
}

// products0 and users number the benchmark's products and buyers.
var products0, users atomic.Int64

// placeLockFree is the lock-free baseline: the database checks and deducts
// the stock in one conditional UPDATE, so no lock is needed for it, and the
// order row goes in with it in one transaction. (It does not stop a buyer
// from ordering twice; that would take a unique key on (user, product).)
func placeLockFree(ctx context.Context, db *gorm.DB, product, user string, qty int) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?", qty, product, qty)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return order.ErrSoldOut
		}
		return tx.Exec("INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at) VALUES (?, ?, ?, ?, ?, ?)",
			uuid.NewString(), user, product, qty, "lockfree", time.Now().UTC()).Error
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

// benchDB opens the benchmark's database: on the real server without the
// test proxy, with the pool OpenMySQL sizes for 64 buyers.
func benchDB(b *testing.B, env *testenv.Env) *gorm.DB {
	if env.Mode == testenv.Embedded {
		return env.DB.DB()
	}
	db, err := database.OpenMySQL(context.Background(), env.DB.DirectDSN())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
}

// benchClients connects to the Redis nodes directly, without the test
// proxies, with a pool wide enough for 64 buyers and their watchdogs.
func benchClients(b *testing.B, env *testenv.Env) []*redis.Client {
	var clients []*redis.Client
	for _, addr := range env.Redis.DirectAddrs() {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 128, MinIdleConns: 8})
		b.Cleanup(func() { c.Close() })
		clients = append(clients, c)
	}
	return clients
}
