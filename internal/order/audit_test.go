package order_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestAudit computes the figures of hand-made sales, written straight into
// the tables as the modes would leave them.
func TestAudit(t *testing.T) {
	type row struct {
		user string
		qty  int
	}
	cases := []struct {
		name   string
		mode   strategy.Name
		stock  int // initial
		left   int // stock left in the table
		orders []row
		want   order.Audit
	}{
		{"no orders", strategy.Lua, 5, 5, nil,
			order.Audit{InitialStock: 5, Stock: 5, Consistent: true}},
		{"exact sale", strategy.Redlock, 3, 0, []row{{"a", 1}, {"b", 2}},
			order.Audit{InitialStock: 3, Stock: 0, Orders: 2, Sold: 3, Consistent: true}},
		// Lost updates: four orders took 7 units of 5, but the last writer
		// left 1 in the table. a ordered twice.
		{"oversold with duplicates", strategy.Off, 5, 1, []row{{"a", 1}, {"a", 2}, {"b", 1}, {"c", 3}},
			order.Audit{InitialStock: 5, Stock: 1, Orders: 4, Sold: 7, Oversold: 2, DuplicateOrders: 1}},
		// Two buyers wrote back the same stock: nothing oversold yet, but
		// the books no longer add up.
		{"lost update", strategy.Naive, 10, 9, []row{{"a", 1}, {"b", 1}},
			order.Audit{InitialStock: 10, Stock: 9, Orders: 2, Sold: 2}},
		{"triple order", strategy.Off, 10, 7, []row{{"a", 1}, {"a", 1}, {"a", 1}},
			order.Audit{InitialStock: 10, Stock: 7, Orders: 3, Sold: 3, DuplicateOrders: 2, Consistent: true}},
	}
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		db := b.DB.DB()
		shop := newShops(t, b, 1, order.Options{})[0]
		// Orders of another product, to show they are not counted.
		other := newProduct(t, b, "other", stock.Product{Strategy: strategy.Off, Stock: 10})
		insertOrder(t, b, other.ID, "a", 4)

		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				p := newProduct(t, b, "audit", stock.Product{Strategy: c.mode, Stock: c.stock})
				if err := db.Exec("UPDATE products SET stock = ? WHERE id = ?", c.left, p.ID).Error; err != nil {
					t.Fatal(err)
				}
				for _, o := range c.orders {
					insertOrder(t, b, p.ID, o.user, o.qty)
				}
				want := c.want
				want.ProductID, want.Strategy = p.ID, c.mode
				got, err := shop.Audit(ctx, p.ID)
				if err != nil {
					t.Fatalf("Audit: %v", err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("audit\n got %+v\nwant %+v", got, want)
				}
			})
		}

		if _, err := shop.Audit(ctx, b.Redis.Key("nope")); !errors.Is(err, stock.ErrNotFound) {
			t.Errorf("Audit of an unknown product: got err %v, want %v", err, stock.ErrNotFound)
		}
	})
}

// insertOrder writes an order row directly, as a mode without protection
// might have.
func insertOrder(t *testing.T, b *testenv.Env, product, user string, qty int) {
	t.Helper()
	err := b.DB.DB().Exec(
		"INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		randomID(), user, product, qty, "off", time.Now().UTC()).Error
	if err != nil {
		t.Fatalf("insert order: %v", err)
	}
}
