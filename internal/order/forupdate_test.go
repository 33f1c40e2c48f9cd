package order_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestForUpdateLockTimeout: a buyer whose row lock does not come within
// the lock wait (another transaction holds the product's row) is told
// ErrLockTimeout once the wait has run out, and not much later, and
// nothing is written; the observer counts the ask and the order as
// lock_timeout. Both ways of bounding the wait run on the real database:
// MariaDB's FOR UPDATE WAIT n, and MySQL's session lock wait timeout
// (which MariaDB honours too). SQLite waits for its write lock for its
// busy timeout, which the lock wait does not shorten (forupdate_row.go).
func TestForUpdateLockTimeout(t *testing.T) {
	const wait = time.Second
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		if b.Mode == testenv.Embedded {
			t.Skip("SQLite waits for its write lock for its busy timeout (10 s), whatever the lock wait")
		}
		for _, how := range []string{"statement", "session"} {
			t.Run(how, func(t *testing.T) {
				rec := &recorder{}
				shop := newShops(t, b, 1, order.Options{LockWait: wait, Observer: rec})[0]
				if how == "session" {
					shop.WaitAsMySQL()
				}
				p := newProduct(t, b, "forupdate-timeout", stock.Product{Strategy: strategy.SQLForUpdate, Stock: 5})

				// Another transaction holds the row.
				holder := b.DB.DB().Begin()
				if err := holder.Exec("SELECT stock FROM products WHERE id = ? FOR UPDATE", p.ID).Error; err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				_, err := shop.Place(context.Background(), order.Request{UserID: "waiter", ProductID: p.ID, Quantity: 1})
				took := time.Since(start)
				holder.Rollback()

				if !errors.Is(err, order.ErrLockTimeout) {
					t.Fatalf("Place: got %v, want %v", err, order.ErrLockTimeout)
				}
				if took < wait-50*time.Millisecond || took > wait+2*time.Second {
					t.Errorf("answered after %v, want after the %v lock wait and soon after", took, wait)
				}
				checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLForUpdate,
					InitialStock: 5, Stock: 5, Consistent: true})
				rec.mu.Lock()
				waited, placed := slices.Clone(rec.waited), slices.Clone(rec.placed)
				rec.mu.Unlock()
				if !slices.Equal(waited, []string{"lock_timeout"}) || !slices.Equal(placed, []string{"lock_timeout"}) {
					t.Errorf("observer: lock asks %v, orders %v; want one lock_timeout each", waited, placed)
				}
				// The wait set for the row is not left on the connection.
				mustPlace(context.Background(), t, shop, p.ID, "after")
			})
		}
	})
}

// TestForUpdateHangUpWhileWaiting: a buyer who hangs up while it waits for
// the row is answered at once (the lock wait has not run out: canceled,
// not lock_timeout), writes nothing, and leaves no connection checked out;
// the holder's sale goes through. SQLite's wait for its write lock, in
// its busy handler, hears no context: there the buyer is answered only
// when the lock comes.
func TestForUpdateHangUpWhileWaiting(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		if b.Mode == testenv.Embedded {
			t.Skip("SQLite's busy handler waits for the write lock whatever the context says")
		}
		rec := &recorder{}
		holding, release := make(chan struct{}), make(chan struct{})
		h := &hookSleep{hook: func(context.Context) { close(holding); <-release }}
		h.armed.Store(true)
		shop := newShops(t, b, 1, order.Options{LockWait: 5 * time.Second, Observer: rec, Sleep: h.Sleep})[0]
		p := newProduct(t, b, "forupdate-hangup", stock.Product{Strategy: strategy.SQLForUpdate, Stock: 5})
		var wg sync.WaitGroup
		wg.Go(func() { mustPlace(context.Background(), t, shop, p.ID, "holder") })
		<-holding // the holder works, its row locked

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel) // an HTTP client hangs up
		_, err := shop.Place(ctx, order.Request{UserID: "gone", ProductID: p.ID, Quantity: 1})
		close(release)
		wg.Wait()

		if err == nil || order.Outcome(err) == "lock_timeout" {
			t.Errorf("the buyer who hung up: got %v, want a cancellation", err)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLForUpdate,
			InitialStock: 5, Stock: 4, Orders: 1, Sold: 1, Consistent: true})
		noConnectionInUse(t, b.DB.DB())
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if !slices.Contains(rec.placed, "canceled") || slices.Contains(rec.placed, "lock_timeout") {
			t.Errorf("orders counted %v, want the one who hung up as canceled", rec.placed)
		}
	})
}

// TestDatabaseLocksOneOrderPerBuyer: under the database's own locks, with
// no dedupe lock in front, eight buyers each click five times at once on
// three shops, for more units than buyers: each buyer gets exactly one
// order, and every other click is told duplicate_order.
func TestDatabaseLocksOneOrderPerBuyer(t *testing.T) {
	const users, clicksEach = 8, 5
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, name := range []strategy.Name{strategy.SQLForUpdate, strategy.SQLVersion} {
			t.Run(string(name), func(t *testing.T) {
				shops := newShops(t, b, 3, order.Options{LockWait: 30 * time.Second})
				p := newProduct(t, b, "clicks-"+string(name), stock.Product{Strategy: name, Stock: 20,
					Work: time.Millisecond})
				var reqs []order.Request
				for range clicksEach {
					reqs = append(reqs, buyers(p.ID, users)...)
				}

				out := rush(t, shops, reqs)

				if got := out.ok.Load(); got != users {
					t.Errorf("orders: got %d, want one per buyer, %d", got, users)
				}
				if got, want := out.dupOrder.Load(), int64(users*(clicksEach-1)); got != want {
					t.Errorf("duplicate_order answers: got %d, want %d", got, want)
				}
				checkExact(t, audit(t, shops[0], p.ID), order.Audit{ProductID: p.ID, Strategy: name,
					InitialStock: 20, Stock: 20 - users, Orders: users, Sold: users, Consistent: true})
			})
		}
	})
}
