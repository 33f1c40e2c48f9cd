package order_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// TestRepeatedClicksWhenSoldOut: a buyer clicks ten times at once on a
// sql-atomic product that has just sold out. Every click INSERTs its order
// on the same unique key and then finds no stock and rolls back; on InnoDB
// the clicks waiting on that key then deadlock one another. Each click must
// still end as sold out (the deadlock's victim runs again), never as an
// internal error, and nothing is written.
func TestRepeatedClicksWhenSoldOut(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shops := newShops(t, b, 3, order.Options{LockWait: 10 * time.Second})
		p := newProduct(t, b, "atomic-soldout", stock.Product{Strategy: strategy.SQLAtomic, Stock: 1})
		mustPlace(context.Background(), t, shops[0], p.ID, "first")

		// One try each, no retries: a deadlock must not reach the buyer.
		start := make(chan struct{})
		errs := make(chan error, 10)
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				<-start
				_, err := shops[i%len(shops)].Place(context.Background(), order.Request{UserID: "alice", ProductID: p.ID, Quantity: 1})
				errs <- err
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if !errors.Is(err, order.ErrSoldOut) {
				t.Errorf("a click: got %v, want %v", err, order.ErrSoldOut)
			}
		}
		checkExact(t, audit(t, shops[0], p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLAtomic,
			InitialStock: 1, Stock: 0, Orders: 1, Sold: 1, Consistent: true})
	})
}
