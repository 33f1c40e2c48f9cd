package order_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// TestFailedBatchAnswersEveryBuyerItsError: a batch whose INSERT fails
// wrote nothing, so none of its buyers may be told what the batch would
// have told them: not sold_out (for units that earlier buyers of the same
// batch were given, and did not get), not duplicate_order (naming an order
// the batch did not write). Three clicks of one buyer and another buyer,
// on a stock of 1 and of 5: everyone gets the sale's error.
func TestFailedBatchAnswersEveryBuyerItsError(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.Lua, strategy.Fenced} {
			for _, units := range []int{1, 5} {
				t.Run(fmt.Sprintf("%s/stock=%d", name, units), func(t *testing.T) {
					db, _ := b.DB.OpenPool(t)
					var armed atomic.Bool
					fail := func(tx *gorm.DB) {
						if armed.CompareAndSwap(true, false) {
							tx.AddError(errors.New("injected: the INSERT failed"))
						}
					}
					if err := db.Callback().Create().Before("gorm:create").Register("test:fail", fail); err != nil {
						t.Fatal(err)
					}
					shop := shopOn(t, b, db, order.Options{})
					p := newProduct(t, b, "batch-fail-"+string(name), stock.Product{Strategy: name, Stock: units, BatchMax: 32})
					reqs := append(clicks(p.ID, "x", 3), order.Request{UserID: "u1", ProductID: p.ID, Quantity: 1})
					armed.Store(true)
					errs := queueBatch(t, b, shop, p, reqs, nil)
					for i, err := range errs {
						if err == nil || errors.Is(err, order.ErrSoldOut) || errors.Is(err, order.ErrDuplicateOrder) {
							t.Errorf("%s, in a batch that wrote nothing: got %v, want the sale's error", reqs[i].UserID, err)
						}
					}
					checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: name,
						InitialStock: units, Stock: units, Consistent: true})
				})
			}
		}
	})
}
