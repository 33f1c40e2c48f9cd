package order_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// The benchmark's shops: each with its own clients, lockers and pool, on
// the servers directly, as a shop process has.

// benchShop is one shop of the benchmark's fleet and its database pool.
type benchShop struct {
	shop  *order.Service
	db    *gorm.DB
	queue *redisqueue.Queue     // on the shop's Redis client
	redis redis.UniversalClient // that client
}

// newBenchShop builds a shop on env with its own Redis and etcd clients and
// lockers (and, on the real database, its own pool), as a shop process has.
func newBenchShop(b *testing.B, env *testenv.Env) benchShop {
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
	lockers[etcdlock.Mode] = etcdlock.New(env.Etcd.Client())
	shop := order.NewService(db, stock.NewStore(db), lockers, order.Options{
		LockWait: 10 * time.Second, Logger: slog.New(slog.DiscardHandler),
		RedisDecr: redisstock.New(clients[0]), Queue: redisqueue.New(clients[0]),
	})
	b.Cleanup(func() { shop.Close() })
	return benchShop{shop: shop, db: db, queue: redisqueue.New(clients[0]), redis: clients[0]}
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
