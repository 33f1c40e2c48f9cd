package redisdecr

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestReclaimAndWriteTakeTurns: the sweep's transaction (reclaimIn) and
// the order's (writeReserved) for one reservation, each begun while the
// other holds the product's row, as a slow shop's write meets a sweep.
// On MySQL and MariaDB (InnoDB, REPEATABLE READ) the second waits for the
// row lock (the test sees it wait); on SQLite for the write lock. Either
// way the one that took the row first decides: a sweep first refuses the
// order; an order first is found by the sweep, and kept.
func TestReclaimAndWriteTakeTurns(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db := b.DB.DB()
		s := newShop(t, b, db, Options{})
		newSale := func(t *testing.T, name string) (stock.Product, orderdb.Order, []redisstock.Reservation) {
			p := addProduct(ctx, t, b, db, name, stock.Product{Stock: 3})
			o := newOrder(p, "x")
			return p, o, []redisstock.Reservation{{Product: p.ID, Buyer: "x", ID: o.ID, Quantity: 1}}
		}

		t.Run("sweep first", func(t *testing.T) {
			p, o, open := newSale(t, "turns-sweep-first")
			sweep := db.WithContext(ctx).Begin()
			defer sweep.Rollback()
			reclaimed, sold, err := reclaimIn(sweep, p.ID, open)
			if err != nil || len(sold) != 0 || !slices.Equal(reclaimed, open) {
				t.Fatalf("the sweep: reclaimed %v, sold %v, %v; want the reservation reclaimed", reclaimed, sold, err)
			}
			wrote := inTurn(ctx, t, db, p.ID, func(tx *gorm.DB) error { return s.writeReserved(tx, o, 0) })
			if err := sweep.Commit().Error; err != nil {
				t.Fatal(err)
			}
			if err := <-wrote; !errors.Is(err, errReclaimed) {
				t.Errorf("the order's write after the sweep: got %v, want %v", err, errReclaimed)
			}
			if n := ordersOf(ctx, t, db, p.ID, "x"); n != 0 {
				t.Errorf("x's orders: %d, want 0", n)
			}
			if left, err := orderdb.ReadStock(ctx, db, p.ID); err != nil || left != 3 {
				t.Errorf("stock: %d (%v), want 3: the refused order took nothing", left, err)
			}
		})

		t.Run("order first", func(t *testing.T) {
			p, o, open := newSale(t, "turns-order-first")
			order := db.WithContext(ctx).Begin()
			defer order.Rollback()
			if err := s.writeReserved(order, o, 0); err != nil {
				t.Fatal(err)
			}
			var reclaimed, sold []redisstock.Reservation
			swept := inTurn(ctx, t, db, p.ID, func(tx *gorm.DB) error {
				var err error
				reclaimed, sold, err = reclaimIn(tx, p.ID, open)
				return err
			})
			if err := order.Commit().Error; err != nil {
				t.Fatal(err)
			}
			if err := <-swept; err != nil || len(reclaimed) != 0 || !slices.Equal(sold, open) {
				t.Errorf("the sweep after the order: reclaimed %v, sold %v, %v; want it sold", reclaimed, sold, err)
			}
			if n := ordersOf(ctx, t, db, p.ID, "x"); n != 1 {
				t.Errorf("x's orders: %d, want 1", n)
			}
		})
	})
}

// inTurn runs stmts in a transaction of its own, in the background, while
// the caller holds product's row in another, and returns where its error
// will come. On MySQL and MariaDB it returns once that transaction waits
// for a lock in a statement that names product; SQLite shows no such
// wait, and there it returns at once (the transaction waits for the write
// lock at BEGIN, or has not begun: either way it runs after the
// caller's).
func inTurn(ctx context.Context, t *testing.T, db *gorm.DB, product string, stmts func(tx *gorm.DB) error, opts ...*sql.TxOptions) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- db.WithContext(ctx).Transaction(stmts, opts...) }()
	if db.Dialector.Name() != "mysql" {
		return done
	}
	waitsForRow(ctx, t, db, product)
	return done
}

// waitsForRow returns once a transaction waits for a lock in a statement
// naming product (InnoDB only).
func waitsForRow(ctx context.Context, t *testing.T, db *gorm.DB, product string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int64
		err := db.WithContext(ctx).Raw("SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?",
			"%'"+product+"'%").Row().Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n >= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("waited 10s for a transaction to wait for the product's row")
		}
		// InnoDB refreshes what information_schema.innodb_trx shows only
		// when it was last read over 100 ms ago: asked more often, it
		// never changes.
		time.Sleep(150 * time.Millisecond)
	}
}
