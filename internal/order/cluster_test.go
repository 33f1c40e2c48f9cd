package order_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// onOneRedis are the strategies whose lock or stock lives on the Redis of
// the single-node roles (a Redis Cluster's slot master, with
// --redis-cluster); the others put only their buyers' dedupe locks there.
var onOneRedis = []strategy.Name{strategy.Naive, strategy.Lua, strategy.Fenced, strategy.RedisDecr, strategy.RedisQueue}

// TestClusterKeysShareTheProductSlot proves on a real Redis Cluster that
// every key of a product shares its hash tag: a cluster refuses a script,
// a transaction or a multi-key command whose keys cross slots (CROSSSLOT),
// so a key that lost its tag fails a sale here (each Place must succeed on
// its first try), and every key the sale left of the product sits in the
// product's slot. redis-queue's order keys are the one exception, by
// design: each carries its order's id as its tag, since a buyer asks for it
// by that id alone.
func TestClusterKeysShareTheProductSlot(t *testing.T) {
	testenv.Cluster(t, func(t *testing.T, b *testenv.Env) {
		ctx := t.Context()
		cl := b.Cluster.Client()
		// The cluster's refusal this test counts on.
		err := cl.Eval(ctx, "return 1", []string{b.Cluster.Key("{a}x"), b.Cluster.Key("{b}y")}).Err()
		if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
			t.Fatalf("a script with keys in two slots: %v, want CROSSSLOT", err)
		}
		for _, st := range onOneRedis {
			t.Run(string(st), func(t *testing.T) {
				shops := newShops(t, b, 2, order.Options{})
				// Work long enough to find a holder's lock and dedupe
				// keys while it works: they go with its release.
				p := newProduct(t, b, string(st), stock.Product{Stock: 3, Strategy: st, LockTTL: 2 * time.Second, Work: 200 * time.Millisecond})
				keys := map[string]bool{}
				placed := make(chan error, 1)
				go func() {
					_, err := shops[0].Place(ctx, order.Request{UserID: "u0", ProductID: p.ID, Quantity: 1})
					placed <- err
				}()
				for done := false; !done; {
					select {
					case err := <-placed:
						if err != nil {
							t.Fatalf("buyer u0: %v", err)
						}
						done = true
					case <-time.After(20 * time.Millisecond): // a look at the cluster while u0 works
					}
					for _, k := range b.Cluster.Keys() {
						keys[k] = true
					}
				}
				if _, err := shops[1].Place(ctx, order.Request{UserID: "u0", ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrDuplicateOrder) && !errors.Is(err, order.ErrDuplicateRequest) {
					t.Errorf("u0 again: %v, want a duplicate", err)
				}
				for i := 1; i <= 3; i++ { // sold out at the third
					_, err := shops[i%2].Place(ctx, order.Request{UserID: fmt.Sprint("u", i), ProductID: p.ID, Quantity: 1})
					if err != nil && !(i == 3 && errors.Is(err, order.ErrSoldOut)) {
						t.Fatalf("buyer u%d: %v", i, err)
					}
				}
				if st == strategy.RedisQueue {
					drained(t, shops[0], p.ID)
				}
				want := order.Audit{ProductID: p.ID, Strategy: st, InitialStock: 3, Stock: 0,
					Orders: 3, Sold: 3, Consistent: true}
				checkExact(t, audit(t, shops[0], p.ID), want)
				for _, k := range b.Cluster.Keys() {
					keys[k] = true
				}

				slot := cl.ClusterKeySlot(ctx, "{"+p.ID+"}").Val()
				seen := 0
				for k := range keys {
					if !strings.Contains(k, p.ID) {
						continue // another product's, or an order's key, tagged by the order's id
					}
					seen++
					if got := cl.ClusterKeySlot(ctx, k).Val(); got != slot {
						t.Errorf("key %s is in slot %d, the product's ({%s}) in %d", k, got, p.ID, slot)
					}
				}
				t.Logf("%d keys of the product seen, all in slot %d", seen, slot)
				if seen == 0 {
					t.Errorf("no key of %s on the cluster: the sale did not run there", p.ID)
				}
			})
		}
	})
}
