package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// TestLostCommitAnswerOtherStrategies: a commit lands but its answer is lost,
// the database still up. Every strategy other than redis-decr (for which
// see TestRedisDecrKeepsLandedOrder) asks whether the order is there and
// answers success: the buyer is never told "nothing was written" about an
// order that exists.
func TestLostCommitAnswerOtherStrategies(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.SQLAtomic, strategy.Fenced, strategy.Lua} {
			t.Run(string(name), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				db, f := b.DB.OpenPool(t)
				shop := shopOn(t, b, db, order.Options{})
				p := newProduct(t, b, "lost-answer-"+string(name), stock.Product{Strategy: name, Stock: 3})
				mustPlace(ctx, t, shop, p.ID, "warm")
				f.LoseNextAnswer(false)
				_, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				_, retry := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				a := audit(t, shop, p.ID)
				t.Logf("first: %v; retry: %v; orders %d", err, retry, a.Orders)
				if a.Orders == 2 && err != nil {
					t.Errorf("Place answered %v for an order that was written", err)
				}
			})
		}
	})
}
