package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// A Redis row's return that Redis loses, or never had a stock to take:
// the unit comes back once all the same.

// stockName is the name of the Redis stock user's first order of p is
// taken from: p's own, or its buyer's home bucket.
func stockName(p stock.Product, user string) string {
	if p.Buckets < 2 {
		return p.ID
	}
	return redisstock.Bucket(p.ID, orderdb.HomeBucket(user, p.Buckets), p.Buckets)
}

// sameHome returns a buyer other than user whose first order of p is
// taken from the same stock as user's.
func sameHome(t *testing.T, p stock.Product, user string) string {
	t.Helper()
	for _, u := range []string{"u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "ua", "ub", "uc", "ud"} {
		if stockName(p, u) == stockName(p, user) {
			return u
		}
	}
	t.Fatalf("no buyer shares %s's stock of %s", user, p.ID)
	return ""
}

// buyersOf is the key of the buyers of Redis stock name for p's strategy.
func buyersOf(p stock.Product, name string) string {
	if p.Strategy == strategy.RedisQueue {
		return "flashsale:queue:buyers:{" + name + "}"
	}
	return redisstock.BuyersKey(name)
}

// loseStock deletes Redis stock name's keys but its queue's stream, as
// a Redis that restarted empty (or failed over to a replica without
// them) has lost them.
func loseStock(ctx context.Context, t *testing.T, c redis.UniversalClient, p stock.Product, name string) {
	t.Helper()
	for _, k := range []string{redisstock.StockKey(name), buyersOf(p, name), "flashsale:reserved:{" + name + "}",
		"flashsale:returned:{" + name + "}", "flashsale:returns:{" + name + "}"} {
		if err := c.Del(ctx, k).Err(); err != nil {
			t.Fatalf("del %s: %v", k, err)
		}
	}
}

// rowsOwed counts p's rows of redis_owed: unpaid only, or all.
func rowsOwed(t *testing.T, b *testenv.Env, p stock.Product, all bool) int {
	t.Helper()
	q := "SELECT COUNT(*) FROM redis_owed WHERE product_id = ?"
	if !all {
		q += " AND paid_ms IS NULL"
	}
	var n int
	if err := b.DB.DB().Raw(q, p.ID).Row().Scan(&n); err != nil {
		t.Fatalf("count redis_owed: %v", err)
	}
	return n
}

// sweepUntil sweeps shop until done holds.
func sweepUntil(ctx context.Context, t *testing.T, shop *order.Service, what string, done func() bool) {
	t.Helper()
	testenv.WaitFor(t, 20*time.Second, what, func() bool {
		if _, err := shop.Sweep(ctx); err != nil {
			t.Logf("Sweep: %v", err)
		}
		return done()
	})
}

// TestRedisReturnOwedAtLoad: Redis loses a product's stock while a
// return is owed to it; the stock loaded from the database counts that
// return already, and the sweep's payment of it must not count it again.
func TestRedisReturnOwedAtLoad(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shops := newShops(t, b, 2, order.Options{SweepEvery: -1})
		dying, alive := shops[0], shops[1]
		order.CrashAfterReturnCommit(dying)
		order.PayOwedAfter(alive, 0) // only sweepUntil sweeps, once the stock is loaded
		c := b.Single(b.Redis.Clients())
		for _, row := range redisRows {
			t.Run(row.name, func(t *testing.T) {
				p := payable(t, b, row.p, 8, time.Minute)
				o := placeWritten(ctx, t, alive, p, "u1")
				if _, err := dying.Cancel(ctx, o.ID); err != nil {
					t.Fatalf("Cancel: %v", err)
				}
				if n := rowsOwed(t, b, p, false); n != 1 {
					t.Fatalf("%d returns owed after the crash, want 1", n)
				}
				loseStock(ctx, t, c, p, stockName(p, "u1"))
				placeWritten(ctx, t, alive, p, sameHome(t, p, "u1")) // loads the stock
				sweepUntil(ctx, t, alive, "the sweep to pay the owed return", func() bool { return rowsOwed(t, b, p, false) == 0 })
				checkStores(ctx, t, b, alive, p, 7)
			})
		}
	})
}

// TestRedisReturnLostInFailover: Redis takes a return and loses it, as a
// master that dies before its replica has the return does; the return
// is sent again once it has been paid a while, and the unit is back.
func TestRedisReturnLostInFailover(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{SweepEvery: -1})[0]
		order.KeepPaidReturns(shop, 200*time.Millisecond)
		c := b.Single(b.Redis.Clients())
		for _, row := range redisRows {
			t.Run(row.name, func(t *testing.T) {
				p := payable(t, b, row.p, 4, time.Minute)
				o := placeWritten(ctx, t, shop, p, "u1")
				if _, err := shop.Cancel(ctx, o.ID); err != nil {
					t.Fatalf("Cancel: %v", err)
				}
				checkStores(ctx, t, b, shop, p, 4)
				// The new master: the return never reached it.
				name := stockName(p, "u1")
				pipe := c.TxPipeline()
				pipe.DecrBy(ctx, redisstock.StockKey(name), 1)
				pipe.SRem(ctx, "flashsale:returned:{"+name+"}", o.ID)
				pipe.Decr(ctx, "flashsale:returns:{"+name+"}")
				pipe.HSet(ctx, buyersOf(p, name), "u1", o.ID)
				if _, err := pipe.Exec(ctx); err != nil {
					t.Fatalf("undo the return: %v", err)
				}
				sweepUntil(ctx, t, shop, "the sweep's last send of the return", func() bool { return rowsOwed(t, b, p, true) == 0 })
				checkStores(ctx, t, b, shop, p, 4)
				placeWritten(ctx, t, shop, p, "u1") // the buyer may buy again
				checkStores(ctx, t, b, shop, p, 3)
			})
		}
	})
}
