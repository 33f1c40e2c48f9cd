package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Attacks on a return to Redis that held (issue 44): Redis loses the
// stock at each point of a return, and a load races it with a snapshot
// older or newer than the return's commit. Each ends with the unit back
// once in both stores, nothing owed, and the paid row's last send
// changing nothing.

// redisReturn runs Redis's return script for o of p directly, as the
// shop's payRedis would (without marking the row paid).
func redisReturn(ctx context.Context, t *testing.T, c redis.UniversalClient, p stock.Product, o order.Order) (bool, error) {
	t.Helper()
	if p.Strategy == strategy.RedisQueue {
		return redisqueue.New(c).Return(ctx, p.ID, o.UserID, o.ID, o.Quantity)
	}
	name := stockName(p, o.UserID)
	return redisstock.New(c).Return(ctx, name, redisstock.BuyersKey(name), o.UserID, o.ID, o.Quantity)
}

// staleLoad reads what a load of the stock name of p would load now (its
// stock, and the owed returns it counts, in one snapshot) and returns the
// load of it, to run later, as a buyer's click whose LoadIfMissing
// arrives after other changes.
func staleLoad(ctx context.Context, t *testing.T, b *testenv.Env, c redis.UniversalClient, p stock.Product, user string) func() {
	t.Helper()
	name := stockName(p, user)
	left, err := redisstock.New(c).Left(ctx, name) // the settled stock: the database's, bucket's too
	if err != nil {
		t.Fatalf("Left: %v", err)
	}
	var bucket *int
	if p.Buckets >= 2 {
		for i := range p.Buckets {
			if redisstock.Bucket(p.ID, i, p.Buckets) == name {
				bucket = &i
			}
		}
	}
	var owed []string
	err = orderdb.Snapshot(ctx, b.DB.DB(), func(tx *gorm.DB) (err error) {
		owed, err = orderdb.OwedIDs(tx, p.ID, bucket)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := redisstock.New(c).LoadIfMissing(ctx, name, left, owed...); err != nil {
			t.Fatalf("LoadIfMissing: %v", err)
		}
	}
}

// settleAll sweeps shop until no row of p is left in redis_owed, paid or
// not (shop keeps its paid rows briefly), and checks both stores.
func settleAll(ctx context.Context, t *testing.T, b *testenv.Env, shop *order.Service, p stock.Product, want int) {
	t.Helper()
	sweepUntil(ctx, t, shop, "every owed row paid, sent once more, and deleted", func() bool { return rowsOwed(t, b, p, true) == 0 })
	checkStores(ctx, t, b, shop, p, want)
}

func TestRedisReturnLossAtEachPoint(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shops := newShops(t, b, 2, order.Options{SweepEvery: -1})
		dying, alive := shops[0], shops[1]
		order.CrashAfterReturnCommit(dying)
		order.KeepPaidReturns(alive, 300*time.Millisecond)
		order.PayOwedAfter(alive, 0) // only settleAll sweeps, once the scene is set
		c := b.Single(b.Redis.Clients())
		for _, row := range redisRows {
			t.Run(row.name, func(t *testing.T) {
				t.Run("before the commit", func(t *testing.T) {
					p := payable(t, b, row.p, 4, time.Minute)
					o := placeWritten(ctx, t, alive, p, "u1")
					loseStock(ctx, t, c, p, stockName(p, "u1"))
					if _, err := alive.Cancel(ctx, o.ID); err != nil { // Redis refuses: no stock
						t.Fatalf("Cancel: %v", err)
					}
					placeWritten(ctx, t, alive, p, sameHome(t, p, "u1")) // loads 4, the return counted
					settleAll(ctx, t, b, alive, p, 3)
				})
				t.Run("between return.lua and the paid mark", func(t *testing.T) {
					p := payable(t, b, row.p, 4, time.Minute)
					o := placeWritten(ctx, t, alive, p, "u1")
					if _, err := dying.Cancel(ctx, o.ID); err != nil {
						t.Fatalf("Cancel: %v", err)
					}
					if ok, err := redisReturn(ctx, t, c, p, o); !ok || err != nil {
						t.Fatalf("return.lua: %v, %v", ok, err)
					}
					loseStock(ctx, t, c, p, stockName(p, "u1"))
					placeWritten(ctx, t, alive, p, sameHome(t, p, "u1"))
					settleAll(ctx, t, b, alive, p, 3)
				})
				t.Run("a load older than the commit, return.lua first", func(t *testing.T) {
					p := payable(t, b, row.p, 4, time.Minute)
					o := placeWritten(ctx, t, alive, p, "u1")
					load := staleLoad(ctx, t, b, c, p, "u1") // 3, nothing owed
					loseStock(ctx, t, c, p, stockName(p, "u1"))
					if _, err := alive.Cancel(ctx, o.ID); err != nil { // return.lua: no stock
						t.Fatalf("Cancel: %v", err)
					}
					load()
					settleAll(ctx, t, b, alive, p, 4)
				})
				t.Run("a load older than the commit, load.lua first", func(t *testing.T) {
					p := payable(t, b, row.p, 4, time.Minute)
					o := placeWritten(ctx, t, alive, p, "u1")
					load := staleLoad(ctx, t, b, c, p, "u1")
					loseStock(ctx, t, c, p, stockName(p, "u1"))
					load()
					if _, err := alive.Cancel(ctx, o.ID); err != nil {
						t.Fatalf("Cancel: %v", err)
					}
					settleAll(ctx, t, b, alive, p, 4)
				})
				t.Run("a load newer than the commit, before return.lua", func(t *testing.T) {
					p := payable(t, b, row.p, 4, time.Minute)
					o := placeWritten(ctx, t, alive, p, "u1")
					if _, err := dying.Cancel(ctx, o.ID); err != nil {
						t.Fatalf("Cancel: %v", err)
					}
					loseStock(ctx, t, c, p, stockName(p, "u1"))
					placeWritten(ctx, t, alive, p, sameHome(t, p, "u1")) // the real load: 4, marked
					if ok, err := redisReturn(ctx, t, c, p, o); ok || err != nil {
						t.Errorf("return.lua after the load: %v, %v; want false (counted)", ok, err)
					}
					settleAll(ctx, t, b, alive, p, 3)
				})
				t.Run("lost after the paid mark, within the keep", func(t *testing.T) {
					p := payable(t, b, row.p, 4, time.Minute)
					o := placeWritten(ctx, t, alive, p, "u1")
					if _, err := alive.Cancel(ctx, o.ID); err != nil {
						t.Fatalf("Cancel: %v", err)
					}
					loseStock(ctx, t, c, p, stockName(p, "u1"))
					placeWritten(ctx, t, alive, p, sameHome(t, p, "u1")) // loads 4, the paid row counted
					settleAll(ctx, t, b, alive, p, 3)
				})
			})
		}
	})
}
