package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// TestKeysOfOneKindNeverNameAnother: ids may contain ':', yet a product
// named "X:fence" never shares a key with the fenced product X's fence
// counter: each kind of key has its own namespace. A lua order for
// "X:fence" after X sold is not kept waiting on X's counter, and fenced
// Z's acquire works while a lua "Z:fence" holds its lock.
func TestKeysOfOneKindNeverNameAnother(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{LockWait: 2 * time.Second})[0]
		mk := func(id string, s strategy.Name) stock.Product {
			t.Helper()
			p := stock.Product{ID: id, Strategy: s, Stock: 5, LockTTL: 5 * time.Second}
			got, err := shop.AddProduct(ctx, p)
			if err != nil {
				t.Fatalf("create %s: %v", id, err)
			}
			return got
		}
		buy := func(p stock.Product, user string) {
			t.Helper()
			if _, err := shop.Place(ctx, order.Request{UserID: user, ProductID: p.ID, Quantity: 1}); err != nil {
				t.Errorf("%s buys %s (%s): %v", user, p.ID, p.Strategy, err)
			}
		}

		t.Run("lua product named like a fence counter", func(t *testing.T) {
			x := mk(b.Redis.Key("X"), strategy.Fenced)
			xFence := mk(x.ID+":fence", strategy.Lua)
			buy(x, "a")
			buy(xFence, "b")
		})

		t.Run("fenced product while its namesake holds a lock", func(t *testing.T) {
			z := mk(b.Redis.Key("Z"), strategy.Fenced)
			zFence := mk(z.ID+":fence", strategy.Lua)
			lua, err := dlock.New(dlock.ModeLua, b.Redis.Clients())
			if err != nil {
				t.Fatal(err)
			}
			defer lua.Close()
			// Hold Z:fence's product lock from another shop.
			held, err := lua.TryLock(ctx, order.ProductKey(zFence.ID), 10*time.Second)
			if err != nil {
				t.Fatalf("hold %s's lock: %v", zFence.ID, err)
			}
			defer held.Release(ctx)
			buy(z, "c")
			buy(z, "d")
		})
	})
}
