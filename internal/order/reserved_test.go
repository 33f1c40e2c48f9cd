package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// TestRedisDecrDatabaseDown: orders reserved in Redis whose database write
// then fails give their units back: none is sold in Redis and never in SQL.
// While the database is down every order fails with ErrUnavailable. Whether
// such a write landed is not known until the database answers again, so
// the units come back in the background (settle), once it says the order
// is not there; then the audit shows no drift, and every unit is still for
// sale.
func TestRedisDecrDatabaseDown(t *testing.T) {
	const units, failed = 5, 3
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "decr-down", stock.Product{Strategy: strategy.RedisDecr, Stock: units})
		mustPlace(ctx, t, shop, p.ID, "before") // and the product's settings are cached

		b.DB.Stop()
		for i := range failed {
			_, err := shop.Place(ctx, order.Request{UserID: "during-" + string(rune('a'+i)), ProductID: p.ID, Quantity: 1})
			if !errors.Is(err, order.ErrUnavailable) {
				t.Errorf("Place with the database down: got %v, want %v", err, order.ErrUnavailable)
			}
		}
		b.DB.Start()

		waitGivenBack(t, shop, p.ID, failed)
		a := audit(t, shop, p.ID)
		if a.RedisStock == nil || a.Drift != 0 || a.Stock != units-1 {
			t.Errorf("after recovery: database stock %d, Redis stock %v, drift %d (%s); want %d, %d, 0",
				a.Stock, deref(a.RedisStock), a.Drift, a.RedisErr, units-1, units-1)
		}
		// Every unit the failed orders had reserved can be bought again,
		// including by the buyers whose orders failed.
		for i := range failed {
			eventuallyPlace(ctx, t, shop, p.ID, "during-"+string(rune('a'+i)))
		}
		eventuallyPlace(ctx, t, shop, p.ID, "after")
		if _, err := shop.Place(ctx, order.Request{UserID: "late", ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrSoldOut) {
			t.Errorf("Place after the last unit: got %v, want %v", err, order.ErrSoldOut)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: units, Stock: 0, Orders: units, Sold: units, Consistent: true})
	})
}

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

// waitGivenBack waits, for at most fifteen seconds, until product's
// reservations given back reach want: the settlements of orders that
// failed in doubt run in the background.
func waitGivenBack(t *testing.T, shop *order.Service, product string, want int64) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := shop.Events(product).GivenBack
		if got == want {
			return
		}
		if got > want || time.Now().After(deadline) {
			t.Fatalf("reservations given back: got %d, want %d", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
