package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// fastFail bounds how long Place may take to say ErrUnavailable.
const fastFail = 3 * time.Second

// TestRedisDown: with the lua node down, or a majority of the redlock nodes,
// Place fails fast with ErrUnavailable and writes nothing; with a minority of
// redlock nodes down it still sells; and it recovers once the nodes are back.
func TestRedisDown(t *testing.T) {
	cases := []struct {
		name   string
		mode   strategy.Name
		down   []int
		sellOK bool // whether Place still works with those nodes down
	}{
		{"lua node down", strategy.Lua, []int{0}, false},
		{"redlock 2 of 5 down", strategy.Redlock, []int{3, 4}, true},
		{"redlock 3 of 5 down", strategy.Redlock, []int{0, 2, 4}, false},
	}
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				shop := newShops(t, b, 1, order.Options{LockWait: 2 * time.Second})[0]
				p := newProduct(t, b, "down-"+string(c.mode), stock.Product{Strategy: c.mode, Stock: 10, LockTTL: time.Second})
				mustPlace(ctx, t, shop, p.ID, "before")

				for _, i := range c.down {
					b.Redis.Stop(i)
				}
				start := time.Now()
				_, err := shop.Place(ctx, order.Request{UserID: "during", ProductID: p.ID, Quantity: 1})
				took := time.Since(start)
				wantOrders := 1
				switch {
				case c.sellOK && err != nil:
					t.Errorf("Place with nodes %v down: %v, want success", c.down, err)
				case c.sellOK:
					wantOrders = 2
				case !errors.Is(err, order.ErrUnavailable):
					t.Errorf("Place with nodes %v down: got err %v, want %v", c.down, err, order.ErrUnavailable)
				case took > fastFail:
					t.Errorf("Place with nodes %v down took %v, want under %v", c.down, took, fastFail)
				}
				checkAudit(t, shop, p.ID, wantOrders)

				for _, i := range c.down {
					b.Redis.Start(i)
				}
				eventuallyPlace(ctx, t, shop, p.ID, "after")
				checkAudit(t, shop, p.ID, wantOrders+1)
				checkNoKeys(t, b, p.ID)
			})
		}
	})
}

// TestDatabaseDown: with the database down, Place fails fast with
// ErrUnavailable, whether the database goes down before the order or inside
// the critical section, leaves no lock behind, and recovers after Start.
func TestDatabaseDown(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h := &hookSleep{}
		shops := newShops(t, b, 2, order.Options{LockWait: 2 * time.Second, Sleep: h.Sleep})
		warm, cold := shops[0], shops[1] // warm has the product cached
		p := newProduct(t, b, "db-down", stock.Product{Strategy: strategy.Lua, Stock: 10, LockTTL: time.Second})
		mustPlace(ctx, t, warm, p.ID, "before")

		t.Run("before the order", func(t *testing.T) {
			b.DB.Stop()
			defer b.DB.Start()
			for name, shop := range map[string]*order.Service{"cached product": warm, "uncached product": cold} {
				start := time.Now()
				_, err := shop.Place(ctx, order.Request{UserID: "during", ProductID: p.ID, Quantity: 1})
				if !errors.Is(err, order.ErrUnavailable) {
					t.Errorf("%s: got err %v, want %v", name, err, order.ErrUnavailable)
				}
				if took := time.Since(start); took > fastFail {
					t.Errorf("%s: took %v, want under %v", name, took, fastFail)
				}
			}
		})

		t.Run("inside the critical section", func(t *testing.T) {
			slow := newProduct(t, b, "db-down-slow", stock.Product{Strategy: strategy.Lua, Stock: 10,
				LockTTL: time.Second, Work: 100 * time.Millisecond})
			h.hook = func(context.Context) { b.DB.Stop() } // as the work begins
			h.armed.Store(true)
			_, err := warm.Place(ctx, order.Request{UserID: "mid", ProductID: slow.ID, Quantity: 1})
			b.DB.Start()
			if !errors.Is(err, order.ErrUnavailable) {
				t.Errorf("got err %v, want %v", err, order.ErrUnavailable)
			}
			checkAudit(t, warm, slow.ID, 0)
			checkNoKeys(t, b, slow.ID)
		})

		checkAudit(t, warm, p.ID, 1)
		eventuallyPlace(ctx, t, warm, p.ID, "after")
		eventuallyPlace(ctx, t, cold, p.ID, "after-cold")
		checkAudit(t, warm, p.ID, 3)
	})
}

// TestLockLostAbortsWrite: when the watchdog cannot renew the product lock
// (its Redis node died mid-way), the lock's context is cancelled, the
// critical section stops before it writes, and Place says ErrLockLost
// long before the work would have ended, and counts it.
func TestLockLostAbortsWrite(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h := &hookSleep{}
		h.hook = func(context.Context) { b.Redis.Stop(0) } // as the work begins
		shop := newShops(t, b, 1, order.Options{LockWait: 2 * time.Second, Sleep: h.Sleep})[0]
		p := newProduct(t, b, "lost", stock.Product{Strategy: strategy.Lua, Stock: 10,
			LockTTL: 300 * time.Millisecond, Work: 5 * time.Second})

		h.armed.Store(true)
		start := time.Now()
		_, err := shop.Place(ctx, order.Request{UserID: "u", ProductID: p.ID, Quantity: 1})
		took := time.Since(start)
		b.Redis.Start(0)

		if !errors.Is(err, order.ErrLockLost) {
			t.Errorf("got err %v, want %v", err, order.ErrLockLost)
		}
		if got := shop.Events(p.ID).LocksLost; got != 1 {
			t.Errorf("Events.LocksLost = %d, want 1", got)
		}
		if took > 2*time.Second {
			t.Errorf("Place took %v: the lost lock did not stop the 5s of work", took)
		}
		checkAudit(t, shop, p.ID, 0)
	})
}

// TestLockLostRollsBack: the lock is lost (Redis goes away) while a fenced
// holder works inside its transaction, or a lua holder before it: nothing
// is written, Place says ErrLockLost or ErrUnavailable, and no connection
// stays checked out.
func TestLockLostRollsBack(t *testing.T) {
	testenv.SkipShort(t, "TestLockLostAbortsWrite checks that a lost lock writes nothing")
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.Fenced, strategy.Lua} {
			t.Run(string(name), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				h := &hookSleep{}
				h.hook = func(context.Context) { b.Redis.Stop(0) }
				shop := newShops(t, b, 1, order.Options{Sleep: h.Sleep})[0]
				p := newProduct(t, b, "lock-lost-"+string(name), stock.Product{Strategy: name, Stock: 5,
					LockTTL: 200 * time.Millisecond, Work: time.Second})
				mustPlace(ctx, t, shop, p.ID, "warm")
				h.armed.Store(true)
				_, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				b.Redis.Start(0)
				t.Logf("Place while the lock is lost: %v", err)
				if !errors.Is(err, order.ErrLockLost) && !errors.Is(err, order.ErrUnavailable) {
					t.Errorf("got %v, want ErrLockLost", err)
				}
				a := audit(t, shop, p.ID)
				if a.Orders != 1 || a.Stock != 4 {
					t.Errorf("audit after a lost lock: %+v", a)
				}
				noConnectionInUse(t, b.DB.DB())
			})
		}
	})
}
