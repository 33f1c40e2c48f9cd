package order_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestForUpdateConnKilledWhileHolding: the holder's connection is
// killed by the server between its SELECT … FOR UPDATE and its write (the
// work runs, the row locked). The holder is told a retryable error, nothing
// is written, and the next buyer gets the row at once.
func TestForUpdateConnKilledWhileHolding(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		if b.Mode == testenv.Embedded {
			t.Skip("no KILL on SQLite")
		}
		db := b.DB.DB()
		h := &hookSleep{hook: func(ctx context.Context) {
			var id int64
			err := db.Raw(`SELECT t.trx_mysql_thread_id FROM information_schema.innodb_trx t
				JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id WHERE p.db = DATABASE()`).
				Row().Scan(&id)
			if err != nil {
				t.Errorf("find the holder's connection: %v", err)
				return
			}
			if err := db.Exec("KILL CONNECTION ?", id).Error; err != nil {
				t.Errorf("kill %d: %v", id, err)
			}
		}}
		h.armed.Store(true)
		shop := newShops(t, b, 1, order.Options{LockWait: 5 * time.Second, Sleep: h.Sleep})[0]
		p := newProduct(t, b, "forupdate-killed", stock.Product{Strategy: strategy.SQLForUpdate, Stock: 5,
			Work: time.Millisecond})

		_, err := shop.Place(context.Background(), order.Request{UserID: "killed", ProductID: p.ID, Quantity: 1})
		if !errors.Is(err, order.ErrUnavailable) {
			t.Errorf("the holder whose connection was killed: %v (outcome %s), want ErrUnavailable", err, order.Outcome(err))
		}
		start := time.Now()
		mustPlace(context.Background(), t, shop, p.ID, "next")
		if took := time.Since(start); took > time.Second {
			t.Errorf("the next buyer waited %v for the row", took)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLForUpdate,
			InitialStock: 5, Stock: 4, Orders: 1, Sold: 1, Consistent: true})
	})
}

// TestForUpdateHolderHangsUp: the holder's buyer hangs up while it
// works with the row locked: the buyer waiting for the row gets it at once
// (the rollback frees it), not after the lock wait.
func TestForUpdateHolderHangsUp(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		holding, hungUp := make(chan struct{}), make(chan struct{})
		hctx, cancel := context.WithCancel(context.Background())
		h := &hookSleep{hook: func(ctx context.Context) {
			close(holding)
			<-hungUp
			<-ctx.Done()
		}}
		h.armed.Store(true)
		shop := newShops(t, b, 1, order.Options{LockWait: 5 * time.Second, Sleep: h.Sleep})[0]
		p := newProduct(t, b, "forupdate-holder-gone", stock.Product{Strategy: strategy.SQLForUpdate, Stock: 5,
			Work: time.Millisecond})
		var wg sync.WaitGroup
		var holderErr error
		wg.Go(func() {
			_, holderErr = shop.Place(hctx, order.Request{UserID: "gone", ProductID: p.ID, Quantity: 1})
		})
		<-holding
		var took time.Duration
		var waitErr error
		wg.Go(func() {
			start := time.Now()
			_, waitErr = shop.Place(context.Background(), order.Request{UserID: "waiter", ProductID: p.ID, Quantity: 1})
			took = time.Since(start)
		})
		time.Sleep(200 * time.Millisecond) // the waiter is queued for the row (a few ms would do)
		cancel()
		close(hungUp)
		wg.Wait()
		if holderErr == nil {
			t.Errorf("the holder who hung up got an order")
		}
		if waitErr != nil || took > 2*time.Second {
			t.Errorf("the waiter: %v after %v, want an order soon after the holder hung up", waitErr, took)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLForUpdate,
			InitialStock: 5, Stock: 4, Orders: 1, Sold: 1, Consistent: true})
	})
}

// TestVersionRetryMeetsStockOut: the last unit is sold by another
// buyer while this one works; the write finds the version moved, the retry
// reads 0 and the buyer is told sold out (not a conflict, not an order).
func TestVersionRetryMeetsStockOut(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		other := newShops(t, b, 1, order.Options{})[0]
		var p stock.Product
		h := &hookSleep{hook: func(ctx context.Context) { mustPlace(ctx, t, other, p.ID, "quick") }}
		shop := newShops(t, b, 1, order.Options{Sleep: h.Sleep})[0]
		p = newProduct(t, b, "version-stockout", stock.Product{Strategy: strategy.SQLVersion, Stock: 1})
		h.armed.Store(true)

		_, err := shop.Place(context.Background(), order.Request{UserID: "slow", ProductID: p.ID, Quantity: 1})
		if !errors.Is(err, order.ErrSoldOut) {
			t.Errorf("Place: %v, want sold out", err)
		}
		if got := shop.Events(p.ID).VersionMoved; got != 1 {
			t.Errorf("version_moved %d, want 1", got)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLVersion,
			InitialStock: 1, Stock: 0, Orders: 1, Sold: 1, Consistent: true})
	})
}
