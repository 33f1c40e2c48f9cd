package redisdecr

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/reserve"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/testenv"
)

// On InnoDB, redis-decr's write must not hold up the sweep of another
// product. A locking read of reclaimed in it (an INSERT ... SELECT ...
// WHERE NOT EXISTS (reclaimed), under REPEATABLE READ) would leave a
// shared gap lock on reclaimed until its transaction ends: a sweep of
// another product, which holds that product's row, would wait for it in
// its INSERT INTO reclaimed, and that product's orders behind the sweep.
// The write reads reclaimed only on its slow path, with a plain SELECT,
// which locks nothing (write.go). Here an order of product B
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
		open := []reserve.Reservation{{Product: a.ID, Buyer: "a-dead", ID: oa.ID, Quantity: 1}}
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
