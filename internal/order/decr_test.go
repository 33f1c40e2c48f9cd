package order_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestRedisDecrLoadsMissingStock: a redis-decr product whose stock Redis
// does not have (never loaded, or lost) is loaded from the database by the
// first order, and sells exactly.
func TestRedisDecrLoadsMissingStock(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "decr-missing", stock.Product{Strategy: strategy.RedisDecr, Stock: 2})
		if err := b.Redis.Clients()[0].Del(ctx, "flashsale:stock:{"+p.ID+"}").Err(); err != nil {
			t.Fatal(err)
		}
		mustPlace(ctx, t, shop, p.ID, "a")
		mustPlace(ctx, t, shop, p.ID, "b")
		if _, err := shop.Place(ctx, order.Request{UserID: "c", ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrSoldOut) {
			t.Errorf("third order of 2: got %v, want %v", err, order.ErrSoldOut)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: 2, Stock: 0, Orders: 2, Sold: 2, Consistent: true})
	})
}

// TestRedisDecrRetiresPhantomUnit: once Redis offers a unit the database
// does not have (Redis drifted above it), the database's refusal brings
// Redis down to the database's stock, and the sale ends sold out in both.
func TestRedisDecrRetiresPhantomUnit(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "decr-phantom", stock.Product{Strategy: strategy.RedisDecr, Stock: 1})
		mustPlace(ctx, t, shop, p.ID, "a")
		// Redis reloaded mid-sale / a sold unit given back: one phantom unit.
		if err := b.Redis.Clients()[0].IncrBy(ctx, "flashsale:stock:{"+p.ID+"}", 1).Err(); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			_, err := shop.Place(ctx, order.Request{UserID: "late" + strconv.Itoa(i), ProductID: p.ID, Quantity: 1})
			if !errors.Is(err, order.ErrSoldOut) {
				t.Fatalf("got %v", err)
			}
		}
		a := audit(t, shop, p.ID)
		if a.RedisStock == nil || *a.RedisStock != 0 || a.Drift != 0 {
			t.Errorf("the phantom unit is never retired: Redis %v, drift %d", deref(a.RedisStock), a.Drift)
		}
	})
}
