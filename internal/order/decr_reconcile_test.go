package order_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Tests of the sweep that lowers a redis-decr product's Redis stock to the
// database's (redisdecr/reconcile.go).

// sweptWithin bounds the waits for a sweep: a few of them, one a second.
const sweptWithin = 5 * time.Second

// TestSweepRetiresPhantomUnits: Redis forgot two reservations whose orders
// the database has (their units are offered again), and nobody buys any
// more. The shop that sold the product lowers Redis to the database's
// stock by itself.
func TestSweepRetiresPhantomUnits(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "sweep-phantom", stock.Product{Strategy: strategy.RedisDecr, Stock: 3})
		mustPlace(ctx, t, shop, p.ID, "a")
		mustPlace(ctx, t, shop, p.ID, "b")
		// The database has 1 left; Redis offers 3.
		if n, err := b.Redis.Clients()[0].IncrBy(ctx, redisstock.StockKey(p.ID), 2).Result(); err != nil || n != 3 {
			t.Fatalf("Redis stock after the lost reservations: %d (%v), want 3", n, err)
		}
		testenv.WaitFor(t, sweptWithin, "the sweep to bring the drift to 0", func() bool {
			a := audit(t, shop, p.ID)
			return a.RedisStock != nil && a.Drift == 0
		})
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: 3, Stock: 1, Orders: 2, Sold: 2, Consistent: true})
	})
}

// TestSweepLeavesReservationsInFlight: sweeps that run while reservations
// are on their way to the database, and while some of them are given back,
// never take a unit from the sale: every unit is sold in the end, and
// Redis agrees with the database.
func TestSweepLeavesReservationsInFlight(t *testing.T) {
	const units, buyers, work = 4, 12, 2500 * time.Millisecond
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "sweep-inflight", stock.Product{Strategy: strategy.RedisDecr, Stock: units, Work: work})
		// Half the first wave gives up mid-work (its units are given back)
		// after a sweep has run; the others keep buying until sold out.
		var sold, soldOut atomic.Int64
		errs := make(chan error, buyers)
		var wg sync.WaitGroup
		for i := range buyers {
			wg.Go(func() {
				user := "u" + strconv.Itoa(i)
				if i%2 == 0 {
					gctx, cancel := context.WithTimeout(ctx, work-time.Second)
					defer cancel()
					if _, err := shop.Place(gctx, order.Request{UserID: user, ProductID: p.ID, Quantity: 1}); err == nil {
						sold.Add(1)
						return
					}
				}
				for {
					_, err := shop.Place(ctx, order.Request{UserID: user, ProductID: p.ID, Quantity: 1})
					switch {
					case err == nil:
						sold.Add(1)
						return
					case errors.Is(err, order.ErrSoldOut):
						soldOut.Add(1)
						return
					case errors.Is(err, order.ErrDuplicateRequest): // its give-back is under way
						time.Sleep(50 * time.Millisecond)
					default:
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("Place: %v", err)
		}
		if sold.Load() != units || soldOut.Load() != buyers-units {
			t.Errorf("sold %d, sold out %d; want %d, %d", sold.Load(), soldOut.Load(), units, buyers-units)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: units, Stock: 0, Orders: units, Sold: units, Consistent: true})
	})
}

// TestSweepRepairsFailoverDrift: on real redis-server and redis-sentinel
// processes, two units are sold while the replica's link is held, and the
// master is killed: the promoted replica's counter offers both again,
// though the database has sold them. The sale is over and nobody asks
// Redis again; the shop's sweep brings the promoted counter down to the
// database's. It skips without the binaries unless
// FLASHSALE_TEST_REQUIRE_SENTINEL=1.
func TestSweepRepairsFailoverDrift(t *testing.T) {
	sentinels := testenv.NewSentinels(t)
	env := testenv.NewEnv(t, testenv.Embedded)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: testenv.SentinelMasterName,
		SentinelAddrs: sentinels.Addrs(), ContextTimeoutEnabled: true, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	db := env.DB.DB()
	shop := order.NewService(db, stock.NewStore(db), nil, order.Options{
		RedisDecr: redisstock.New(c), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { shop.Close() })
	p, err := shop.AddProduct(ctx, stock.Product{ID: env.Redis.Key("sweep-failover"), Strategy: strategy.RedisDecr, Stock: 2})
	if err != nil {
		t.Fatal(err)
	}
	set := sentinels.Set()
	replica := redis.NewClient(&redis.Options{Addr: sentinels.Replica(), DisableIdentity: true})
	t.Cleanup(func() { replica.Close() })
	testenv.WaitFor(t, sweptWithin, "the replica to have the stock", func() bool {
		n, err := replica.Get(ctx, redisstock.StockKey(p.ID)).Int()
		return err == nil && n == 2
	})

	set.Link().Hold()
	mustPlace(ctx, t, shop, p.ID, "a")
	mustPlace(ctx, t, shop, p.ID, "b")
	sentinels.KillMaster()
	set.Link().Stop() // what it held dies with the master
	offered, err := replica.Get(ctx, redisstock.StockKey(p.ID)).Int()
	if err != nil || offered != 2 {
		t.Fatalf("the replica's stock before its promotion: %d (%v), want 2: the two reservations never reached it", offered, err)
	}
	sentinels.AwaitMaster(sentinels.Replica(), 30*time.Second)

	testenv.WaitFor(t, sweptWithin, "the sweep to lower the promoted counter to the database's stock", func() bool {
		n, err := replica.Get(ctx, redisstock.StockKey(p.ID)).Int()
		return err == nil && n == 0
	})
	checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
		InitialStock: 2, Stock: 0, Orders: 2, Sold: 2, Consistent: true})
}
