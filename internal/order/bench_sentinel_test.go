package order_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// BenchmarkSentinelLua is what Sentinel costs the lua lock: the same lua
// flow, 64 buyers, on one replicated Redis (a real master, a replica and
// three Sentinels), through go-redis's failover client (client=sentinel)
// and through a plain client to the same master (client=plain). Compare
// them side by side:
//
//	go test -run '^$' -bench BenchmarkSentinelLua -count 6 ./internal/order | benchstat -col /client -
//
// It needs Debian's redis-server and redis-sentinel (skipped without).
func BenchmarkSentinelLua(b *testing.B) {
	modes := testenv.EnvModes(b)
	env := testenv.NewEnv(b, modes[len(modes)-1]) // the real database where there is one
	s := testenv.NewSentinels(b)
	clients := map[string]func() *redis.Client{
		"plain": func() *redis.Client {
			return redis.NewClient(&redis.Options{Addr: s.Master(), PoolSize: 128, MaxRetries: -1,
				ContextTimeoutEnabled: true, DisableIdentity: true})
		},
		"sentinel": func() *redis.Client {
			return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: testenv.SentinelMasterName,
				SentinelAddrs: s.Addrs(), PoolSize: 128, MaxRetries: -1,
				ContextTimeoutEnabled: true, DisableIdentity: true})
		},
	}
	for _, name := range []string{"plain", "sentinel"} {
		b.Run(fmt.Sprintf("client=%s/buyers=64", name), func(b *testing.B) {
			c := clients[name]()
			defer c.Close()
			lua, err := dlock.New(dlock.ModeLua, []*redis.Client{c})
			if err != nil {
				b.Fatal(err)
			}
			defer lua.Close()
			db := env.DB.DB()
			shop := order.NewService(db, stock.NewStore(db), map[dlock.Mode]dlock.Locker{dlock.ModeLua: lua},
				order.Options{LockWait: 10 * time.Second, Logger: slog.New(slog.DiscardHandler)})
			defer shop.Close()
			p, err := shop.AddProduct(context.Background(), stock.Product{
				ID: env.Redis.Key("sentinel-" + name + "-" + strconv.FormatInt(products0.Add(1), 10)), Stock: stock.MaxStock,
				Strategy: strategy.Lua, LockTTL: 2 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			measure(b, 64, func(ctx context.Context) error {
				user := "u" + strconv.FormatInt(users.Add(1), 10)
				_, err := shop.Place(ctx, order.Request{UserID: user, ProductID: p.ID, Quantity: 1})
				return err
			})
		})
	}
}
