package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/zklock"
)

// zkShops builds n simulated shop processes on b that lock zookeeper
// products on z's ensemble, each with a session of its own (one Locker
// each, as one shop process has), keeping its nodes under z's root.
func zkShops(t *testing.T, b *testenv.Env, z *testenv.ZooKeeper, n int, opts order.Options) []*order.Service {
	t.Helper()
	shops := make([]*order.Service, n)
	for i := range shops {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l, err := zklock.New(ctx, z.Servers(), zklock.Options{Root: z.Root()})
		cancel()
		if err != nil {
			t.Fatalf("zklock.New: %v", err)
		}
		t.Cleanup(func() { l.Close() }) // after the shop's Close, registered below
		shops[i] = shopWith(t, b, b.DB.DB(), opts, map[dlock.Mode]dlock.Locker{zklock.Mode: l})
	}
	return shops
}

// TestZooKeeperSellsExactly: three shops, each with its own session, sell
// a product under the zookeeper lock to a crowd ten times its stock: every
// unit once, no more, and one order per buyer.
func TestZooKeeperSellsExactly(t *testing.T) {
	const buyerCount, units = 200, 20
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		z := testenv.NewZooKeeper(t)
		shops := zkShops(t, b, z, 3, order.Options{LockWait: 30 * time.Second})
		p := newProduct(t, b, "zk-exact", stock.Product{Strategy: strategy.ZooKeeper, Stock: units,
			LockTTL: time.Second, Work: time.Millisecond})

		out := rush(t, shops, append(buyers(p.ID, buyerCount), clicks(p.ID, "twice", 2)...))

		if got := out.ok.Load(); got != units {
			t.Errorf("orders placed: got %d, want %d", got, units)
		}
		checkExact(t, audit(t, shops[0], p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.ZooKeeper,
			InitialStock: units, Stock: 0, Orders: units, Sold: units, Consistent: true})
	})
}

// TestZooKeeperWithoutAnEnsemble: a shop with no zookeeper locker answers
// a zookeeper product's order with ErrUnavailable (a 503 that says why,
// not a 500), and writes nothing.
func TestZooKeeperWithoutAnEnsemble(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "zk-none", stock.Product{Strategy: strategy.ZooKeeper, Stock: 10, LockTTL: time.Second})
		if _, err := shop.Place(context.Background(), order.Request{UserID: "a", ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrUnavailable) {
			t.Errorf("Place without a zookeeper locker: %v, want ErrUnavailable", err)
		}
		checkAudit(t, shop, p.ID, 0)
	})
}
