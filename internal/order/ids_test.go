package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestIDsCompareAsBytes: ids are case-sensitive everywhere. After Alice
// bought, "alice", "ALICE" and "aLiCe" are three more buyers in every flow
// (one at a time, batched, lock-free), to the database's unique key and
// audit as to Redis and Go: four orders, no duplicates. With a database
// that folds case (MySQL's default collation) the flows disagree: the
// unbatched flow refuses them as duplicates, the batch sells to them and
// the audit counts three duplicate orders.
func TestIDsCompareAsBytes(t *testing.T) {
	cases := []struct {
		name     strategy.Name
		batchMax int
	}{
		{strategy.Lua, 0}, {strategy.Lua, 16}, {strategy.Fenced, 16},
		{strategy.SQLAtomic, 0}, {strategy.SQLOneTrip, 0}, {strategy.RedisDecr, 0},
	}
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, c := range cases {
			t.Run(string(c.name)+batchSuffix(c.batchMax), func(t *testing.T) {
				ctx := context.Background()
				shop := newShops(t, b, 1, order.Options{})[0]
				p := newProduct(t, b, "case-"+string(c.name), stock.Product{Strategy: c.name, Stock: 10,
					LockTTL: 2 * time.Second, BatchMax: c.batchMax})
				if _, err := shop.Place(ctx, order.Request{UserID: "Alice", ProductID: p.ID, Quantity: 1}); err != nil {
					t.Fatalf("Alice: %v", err)
				}
				others := []order.Request{
					{UserID: "alice", ProductID: p.ID, Quantity: 1},
					{UserID: "ALICE", ProductID: p.ID, Quantity: 1},
					{UserID: "aLiCe", ProductID: p.ID, Quantity: 1},
				}
				var errs []error
				if c.batchMax > 0 {
					errs = queueBatch(t, b, shop, p, others, nil) // one batch
				} else {
					for _, r := range others {
						_, err := shop.Place(ctx, r)
						errs = append(errs, err)
					}
				}
				for i, err := range errs {
					if err != nil {
						t.Errorf("%s: %v, want an order of their own", others[i].UserID, err)
					}
				}
				checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: c.name,
					InitialStock: 10, Stock: 6, Orders: 4, Sold: 4, Consistent: true})
			})
		}
	})
}

func batchSuffix(n int) string {
	if n > 0 {
		return "+batch"
	}
	return ""
}
