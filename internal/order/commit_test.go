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

// TestCommitLandsAsDatabaseGoesDown: a sale's COMMIT lands and the
// database goes down before its answer comes back, so the shop cannot ask
// whether it landed. Every buyer of the sale (a batch of four, or one
// buyer unbatched) is told ErrInDoubt, not ErrUnavailable: their rows
// exist. Once the database is back, each buyer's retry is told
// ErrDuplicateOrder, as a *DuplicateOrderError naming that buyer's order
// (under lua the retries first wait out the product and dedupe locks the
// shop abandoned until their TTL), and nobody has a second one.
func TestCommitLandsAsDatabaseGoesDown(t *testing.T) {
	cases := []struct {
		name  strategy.Name
		batch int
	}{
		{strategy.Lua, 0}, {strategy.Fenced, 0}, {strategy.SQLAtomic, 0}, {strategy.RedisDecr, 0},
		{strategy.Lua, 16}, {strategy.Fenced, 16},
	}
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, c := range cases {
			t.Run(string(c.name)+batchSuffix(c.batch), func(t *testing.T) {
				if c.name == strategy.Lua {
					testenv.SkipShort(t, "waits out the locks the shop abandoned; fenced's rows check the same answers")
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				db, fault := b.DB.OpenPool(t)
				// A short lock wait: lua's abandoned dedupe lock (its TTL
				// is the lock wait plus the lock's) runs out sooner.
				shop := shopOn(t, b, db, order.Options{LockWait: 500 * time.Millisecond})
				p := newProduct(t, b, "in-doubt-"+string(c.name), stock.Product{Strategy: c.name, Stock: 10,
					LockTTL: 2 * time.Second, BatchMax: c.batch})
				mustPlace(ctx, t, shop, p.ID, "warm")

				fault.LoseNextAnswer(true) // the database goes down as the COMMIT lands
				var reqs []order.Request
				var errs []error
				if c.batch > 0 {
					reqs = buyers(p.ID, 4)
					errs = queueBatch(t, b, shop, p, reqs, nil) // one batch: one COMMIT
				} else {
					reqs = buyers(p.ID, 1)
					_, err := shop.Place(ctx, reqs[0])
					errs = []error{err}
				}
				b.DB.Start()
				if n := fault.Lost(); n != 1 {
					t.Fatalf("setup: %d COMMIT answers lost, want 1", n)
				}
				for i, err := range errs {
					if !errors.Is(err, order.ErrInDoubt) || errors.Is(err, order.ErrUnavailable) {
						t.Errorf("%s, whose order landed: got %v, want %v", reqs[i].UserID, err, order.ErrInDoubt)
					}
				}
				sold := 1 + len(reqs)
				want := order.Audit{ProductID: p.ID, Strategy: c.name, InitialStock: 10, Stock: 10 - sold,
					Orders: sold, Sold: sold, Consistent: true}
				checkExact(t, audit(t, shop, p.ID), want)

				for _, r := range reqs {
					err := placeAfterRecovery(ctx, shop, p.ID, r.UserID)
					var dup *order.DuplicateOrderError
					if !errors.As(err, &dup) {
						t.Errorf("%s retries once the database is back: got %v, want a %T", r.UserID, err, dup)
						continue
					}
					if id := orderOf(t, b, p.ID, r.UserID); dup.OrderID != id {
						t.Errorf("%s retries: told its order is %q, want %q", r.UserID, dup.OrderID, id)
					}
				}
				checkExact(t, audit(t, shop, p.ID), want) // no second order
			})
		}
	})
}

// orderOf returns the id of user's order for product, read from b's
// database; it fails t unless user has exactly one.
func orderOf(t *testing.T, b *testenv.Env, product, user string) string {
	t.Helper()
	var ids []string
	err := b.DB.DB().Raw("SELECT id FROM orders WHERE product_id = ? AND user_id = ?", product, user).Scan(&ids).Error
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 {
		t.Fatalf("%s has %d orders for %s, want 1", user, len(ids), product)
	}
	return ids[0]
}
