package order_test

import (
	"context"
	"errors"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestDecrBucketsThroughTheShop: a redis-decr product in three buckets,
// sold by two shops on one Redis and on the Redis Cluster. AddProduct
// loads each bucket's share; buyers whose home is bucket 0 buy every unit
// (the fallback), and only the next is told sold out; the audit is exact
// in total and per bucket, and Redis's buckets, summed, agree with the
// database.
func TestDecrBucketsThroughTheShop(t *testing.T) {
	sell := func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shops := newShops(t, b, 2, order.Options{})
		p := newProduct(t, b, "decr-buckets", stock.Product{Strategy: strategy.RedisDecr, Stock: 6, Buckets: 3})
		users := homedAt(0, 3, 7)
		for i, u := range users[:6] {
			if _, err := shops[i%2].Place(ctx, order.Request{UserID: u, ProductID: p.ID, Quantity: 1}); err != nil {
				t.Fatalf("buyer %d of 6: %v", i+1, err)
			}
		}
		if _, err := shops[0].Place(ctx, order.Request{UserID: users[6], ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrSoldOut) {
			t.Errorf("a seventh buyer: got %v, want %v", err, order.ErrSoldOut)
		}
		a := audit(t, shops[1], p.ID)
		checkBuckets(t, a, 3, 6)
		if a.RedisErr != "" || a.RedisStock == nil || *a.RedisStock != 0 || a.Drift != 0 {
			t.Errorf("Redis: stock %v, drift %d, %q; want 0, 0, no error", a.RedisStock, a.Drift, a.RedisErr)
		}
	}
	testenv.Backends(t, sell)
	testenv.Cluster(t, sell)
}
