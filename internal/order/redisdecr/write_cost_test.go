package redisdecr

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// What redis-decr's write costs the database: the statements of its happy
// path, and locks that hold up no other product's sweep or orders.

// On InnoDB, redis-decr's write must not hold up the sweep of another
// product. A locking read of reclaimed in it (an INSERT ... SELECT ...
// WHERE NOT EXISTS (reclaimed), under REPEATABLE READ) would leave a
// shared gap lock on reclaimed until its transaction ends: a sweep of
// another product, which holds that product's row, would wait for it in
// its INSERT INTO reclaimed, and that product's orders behind the sweep.
// The write reads reclaimed only on its slow path, with a plain SELECT,
// which locks nothing (reclaim.go). Here an order of product B
// stays open between its statements and its COMMIT (a late commit, a
// slow fsync) while product A is swept and then sold: both must finish
// while B is still open.
func TestReclaimIgnoresAnotherProductsOpenOrder(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		db := b.DB.DB()
		if db.Dialector.Name() != "mysql" {
			t.Skip("InnoDB's gap locks: SQLite has one writer at a time anyway")
		}
		ctx := context.Background()
		s := newShop(t, b, db, Options{})
		add := func(name string) stock.Product {
			p := addProduct(ctx, t, b, db, name, stock.Product{Stock: 3})
			return p
		}
		a, bp := add("stall-a"), add("stall-b")

		ob := newOrder(bp, "b1")
		owner := db.WithContext(ctx).Begin()
		defer owner.Rollback()
		if err := s.writeReserved(owner, ob, 0); err != nil {
			t.Fatal(err)
		}

		// With the gap lock, each of these waits for B's COMMIT, which
		// comes only after them: they would end with their context (the
		// server's own lock wait timeout is 50 s).
		wait := 5 * time.Second
		oa := newOrder(a, "a-dead")
		open := []redisstock.Reservation{{Product: a.ID, Buyer: "a-dead", ID: oa.ID, Quantity: 1}}
		sctx, cancel := context.WithTimeout(ctx, wait)
		err := db.WithContext(sctx).Transaction(func(tx *gorm.DB) error {
			_, _, err := reclaimIn(tx, a.ID, open)
			return err
		})
		cancel()
		if err != nil {
			t.Fatalf("the sweep of product A, while an order of product B is open: %v", err)
		}
		wctx, wcancel := context.WithTimeout(ctx, wait)
		defer wcancel()
		oa2 := newOrder(a, "a2")
		if err := db.WithContext(wctx).Transaction(func(tx *gorm.DB) error { return s.writeReserved(tx, oa2, 0) }); err != nil {
			t.Errorf("an order of product A, while an order of product B is open: %v", err)
		}
		if err := owner.Commit().Error; err != nil {
			t.Errorf("B's order: %v", err)
		}
	})
}

// questions runs fn on one pinned connection and returns how many
// statements the server received for it (MariaDB's session Questions,
// less the SHOW that reads it).
func questions(ctx context.Context, t *testing.T, db *gorm.DB, fn func(conn *gorm.DB) error) int64 {
	t.Helper()
	var got int64
	err := db.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		read := func() int64 {
			var name string
			var n int64
			if err := conn.Raw("SHOW SESSION STATUS LIKE 'Questions'").Row().Scan(&name, &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := read()
		if err := fn(conn); err != nil {
			return err
		}
		got = read() - before - 1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestReservedWriteCostsWhatAtomicCosts: redis-decr's happy path sends
// the database what sql-atomic's does (BEGIN, INSERT, the conditional
// UPDATE, COMMIT), counted by the server. A transaction begun at another
// isolation level would cost one more: go-sql-driver/mysql sends SET
// TRANSACTION ISOLATION LEVEL as a statement of its own.
func TestReservedWriteCostsWhatAtomicCosts(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		db := b.DB.DB()
		if db.Dialector.Name() != "mysql" {
			t.Skip("session Questions: MySQL and MariaDB")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, p := redisDecrSale(ctx, t, b, "meet-cost-decr")
		ap, err := stock.NewStore(db).Create(ctx, stock.Product{ID: b.Redis.Key("meet-cost-atomic"), Strategy: strategy.SQLAtomic, Stock: 3})
		if err != nil {
			t.Fatal(err)
		}
		seen, err := s.reclaimsSeen(ctx, p.ID) // cached from here on
		if err != nil {
			t.Fatal(err)
		}
		// As transact runs them: Transaction(stmts). sql-atomic's write
		// (orderdb.InsertAndTake) is the INSERT, then TakeUnits.
		atomic := questions(ctx, t, db, func(conn *gorm.DB) error {
			o := newOrder(ap, "a")
			return conn.Transaction(func(tx *gorm.DB) error {
				if err := orderdb.Insert(tx, o); err != nil {
					return err
				}
				return tx.Exec(orderdb.TakeUnits, o.Quantity, o.ProductID, o.Quantity).Error
			})
		})
		reserved := questions(ctx, t, db, func(conn *gorm.DB) error {
			o := newOrder(p, "a")
			return conn.Transaction(func(tx *gorm.DB) error { return s.writeReserved(tx, o, seen) })
		})
		t.Logf("statements per order: sql-atomic %d, redis-decr %d", atomic, reserved)
		if reserved != atomic {
			t.Errorf("redis-decr's happy path sends %d statements, sql-atomic's %d: want the same", reserved, atomic)
		}
	})
}

// TestSlowPathHoldsUpNoSweep: the slow path's look in reclaimed is a
// plain SELECT, which under REPEATABLE READ locks nothing, and is the
// transaction's first consistent read (INSERT and UPDATE read current
// rows), so its snapshot is taken after the row is held: an order of
// product B on the slow path, left open, holds up neither a sweep of
// product A nor A's next order; and it still sees a reclaim committed
// before it took the row.
func TestSlowPathHoldsUpNoSweep(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		db := b.DB.DB()
		if db.Dialector.Name() != "mysql" {
			t.Skip("InnoDB's gap locks")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, a := redisDecrSale(ctx, t, b, "meet-rr-a")
		bp := addProduct(ctx, t, b, db, "meet-rr-b", stock.Product{Stock: 3})
		// B's reservation was reclaimed after the INSERT; its write takes
		// the slow path, in REPEATABLE READ, and stays open.
		ob := newOrder(bp, "b1")
		owner := db.WithContext(ctx).Begin()
		defer owner.Rollback()
		if err := orderdb.Insert(owner, ob); err != nil {
			t.Fatal(err)
		}
		if err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			_, _, err := reclaimIn(tx, bp.ID, []redisstock.Reservation{{Product: bp.ID, Buyer: "b1", ID: ob.ID, Quantity: 1}})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.takeReserved(owner, ob, 0); !errors.Is(err, errReclaimed) {
			t.Fatalf("B's slow path in REPEATABLE READ: %v, want %v", err, errReclaimed)
		}
		// Product A is swept and sold while B's transaction is open.
		wait := 5 * time.Second
		sctx, scancel := context.WithTimeout(ctx, wait)
		defer scancel()
		oa := newOrder(a, "a-dead")
		if err := db.WithContext(sctx).Transaction(func(tx *gorm.DB) error {
			_, _, err := reclaimIn(tx, a.ID, []redisstock.Reservation{{Product: a.ID, Buyer: "a-dead", ID: oa.ID, Quantity: 1}})
			return err
		}); err != nil {
			t.Errorf("a sweep of A while B's slow path is open: %v", err)
		}
		oa2 := newOrder(a, "a2")
		if err := db.WithContext(sctx).Transaction(func(tx *gorm.DB) error { return s.writeReserved(tx, oa2, 0) }); err != nil {
			t.Errorf("an order of A (slow path, REPEATABLE READ) while B's is open: %v", err)
		}
	})
}
