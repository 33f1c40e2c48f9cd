package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
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

		// A lua lock key followed by ":next" or ":turns" holds its turns
		// (dlock.InTurns), so no lock key may be named like that: a user
		// "alice:next"'s dedupe key must not be alice's turn.
		for _, suffix := range []string{":next", ":turns"} {
			t.Run("dedupe lock of a user named like a turn: "+suffix, func(t *testing.T) {
				for _, s := range []strategy.Name{strategy.Lua, strategy.Fenced} {
					p := mk(b.Redis.Key("D"+suffix[1:]+"-"+string(s)), s)
					// Each holds its dedupe lock in turn while the other
					// orders: alice's acquire reads "alice"+suffix's key,
					// and her release writes it.
					lua, err := dlock.New(dlock.ModeLua, b.Redis.Clients())
					if err != nil {
						t.Fatal(err)
					}
					for _, pair := range [][2]string{{"alice" + suffix, "alice"}, {"alice", "alice" + suffix}} {
						held, err := lua.TryLock(ctx, order.DedupeKey(p.ID, pair[0]), 10*time.Second)
						if err != nil {
							t.Fatalf("hold %s's dedupe lock: %v", pair[0], err)
						}
						buy(p, pair[1])
						if err := held.Release(ctx); err != nil {
							t.Errorf("release %s's dedupe lock after %s ordered: %v", pair[0], pair[1], err)
						}
					}
					lua.Close()
				}
			})
		}
	})
}
