package order_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
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

// TestAtomicRepeatedClicksDeadlock: sql-atomic under repeated clicks by the
// same buyers on a sold-out product. The INSERT-first transactions meet on
// the unique key and the database may report a deadlock (MySQL 1213): each
// click is answered sold_out, duplicate_order or a retryable unavailable,
// never an unexplained error.
func TestAtomicRepeatedClicksDeadlock(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.SQLAtomic, strategy.RedisDecr} {
			t.Run(string(name), func(t *testing.T) {
				var other atomic.Int64
				var sample sync.Map
				for round := range 5 {
					shops := newShops(t, b, 4, order.Options{})
					p := newProduct(t, b, "lockfree-clicks-"+string(name), stock.Product{Strategy: name, Stock: 2})
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					var wg sync.WaitGroup
					start := make(chan struct{})
					for u := range 16 {
						for c := range 4 {
							shop := shops[(u*4+c)%len(shops)]
							wg.Go(func() {
								<-start
								_, err := shop.Place(ctx, order.Request{UserID: "u" + strconv.Itoa(u), ProductID: p.ID, Quantity: 1})
								switch {
								case err == nil, errors.Is(err, order.ErrSoldOut), errors.Is(err, order.ErrDuplicateOrder),
									errors.Is(err, order.ErrDuplicateRequest):
								default:
									other.Add(1)
									sample.LoadOrStore(fmt.Sprintf("%T", errors.Unwrap(err)), err.Error())
								}
							})
						}
					}
					close(start)
					wg.Wait()
					cancel()
					a := audit(t, shops[0], p.ID)
					if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent {
						t.Errorf("round %d: audit %+v", round, a)
					}
				}
				sample.Range(func(k, v any) bool { t.Logf("error: %v", v); return true })
				if n := other.Load(); n > 0 {
					t.Errorf("%d orders ended in an error that is neither sold out nor duplicate", n)
				}
			})
		}
	})
}

// TestAtomicDistinctBuyers: the same rush with 64 distinct buyers, one click
// each.
func TestAtomicDistinctBuyers(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.SQLAtomic, strategy.RedisDecr} {
			t.Run(string(name), func(t *testing.T) {
				var other atomic.Int64
				var sample sync.Map
				for round := range 5 {
					shops := newShops(t, b, 4, order.Options{})
					p := newProduct(t, b, "lockfree-buyers-"+string(name), stock.Product{Strategy: name, Stock: 8})
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					var wg sync.WaitGroup
					start := make(chan struct{})
					for u := range 64 {
						shop := shops[u%len(shops)]
						wg.Go(func() {
							<-start
							_, err := shop.Place(ctx, order.Request{UserID: "u" + strconv.Itoa(u), ProductID: p.ID, Quantity: 1})
							switch {
							case err == nil, errors.Is(err, order.ErrSoldOut), errors.Is(err, order.ErrDuplicateOrder):
							default:
								other.Add(1)
								sample.LoadOrStore(err.Error()[:40], err.Error())
							}
						})
					}
					close(start)
					wg.Wait()
					cancel()
					a := audit(t, shops[0], p.ID)
					if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent || a.Stock != 0 {
						t.Errorf("round %d: audit %+v", round, a)
					}
				}
				sample.Range(func(k, v any) bool { t.Logf("error: %v", v); return true })
				if n := other.Load(); n > 0 {
					t.Errorf("%d orders ended in an error that is neither sold out nor duplicate", n)
				}
			})
		}
	})
}
