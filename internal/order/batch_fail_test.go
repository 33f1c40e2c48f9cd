package order_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
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

// TestBatchDatabaseError: a batch whose transaction meets a database error
// fails every buyer in it with ErrUnavailable, writes nothing, and leaves
// the units on sale for the same buyers once the database is back.
func TestBatchDatabaseError(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t)
		for _, name := range batching {
			t.Run(string(name), func(t *testing.T) {
				h := &hookSleep{}
				h.hook = func(context.Context) { b.DB.Stop() }
				shop := newShops(t, b, 1, order.Options{Sleep: h.Sleep})[0]
				p := newProduct(t, b, "batch-dberr-"+string(name), stock.Product{Strategy: name, Stock: 5, BatchMax: 32})
				h.armed.Store(true)
				reqs := buyers(p.ID, 4)
				errs := queueBatch(t, b, shop, p, reqs, nil)
				b.DB.Start()
				for i, err := range errs {
					if !errors.Is(err, order.ErrUnavailable) {
						t.Errorf("%s with the database gone mid-batch: got %v, want %v", reqs[i].UserID, err, order.ErrUnavailable)
					}
				}
				a := audit(t, shop, p.ID)
				if a.Orders != 0 || a.Stock != 5 {
					t.Errorf("after the failed batch: %d orders, stock %d; want 0 and 5", a.Orders, a.Stock)
				}
				ctx := context.Background()
				for _, r := range reqs {
					eventuallyPlace(ctx, t, shop, p.ID, r.UserID)
				}
				checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: name,
					InitialStock: 5, Stock: 1, Orders: 4, Sold: 4, Consistent: true})
			})
		}
	})
}

// TestBatchLockLost: a lease lost in the middle of a batch (Redis gone, the
// watchdog cannot renew) writes nothing for any buyer in it.
func TestBatchLockLost(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.Lua, strategy.Fenced} {
			t.Run(string(name), func(t *testing.T) {
				h := &hookSleep{}
				h.hook = func(context.Context) { b.Redis.Stop(0) }
				shop := newShops(t, b, 1, order.Options{Sleep: h.Sleep})[0]
				p := newProduct(t, b, "batch-lost-"+string(name), stock.Product{Strategy: name, Stock: 5,
					LockTTL: 200 * time.Millisecond, Work: time.Second, BatchMax: 32})
				h.armed.Store(true)
				reqs := buyers(p.ID, 4)
				errs := queueBatch(t, b, shop, p, reqs, nil)
				b.Redis.Start(0)
				for i, err := range errs {
					if !errors.Is(err, order.ErrLockLost) && !errors.Is(err, order.ErrUnavailable) {
						t.Errorf("%s, lease lost mid-batch: got %v, want %v", reqs[i].UserID, err, order.ErrLockLost)
					}
				}
				a := audit(t, shop, p.ID)
				if a.Orders != 0 || a.Stock != 5 {
					t.Errorf("after the lost lease: %d orders, stock %d; want 0 and 5", a.Orders, a.Stock)
				}
			})
		}
	})
}
