package redisdecr

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"gorm.io/gorm"
)

// redis-decr's write, and how it meets the sweep (reclaim.go): a slow shop
// may come back with an order whose reservation the sweep gave back, and
// the database must refuse it. Like sql-atomic's, the write inserts the
// order first and takes the units last; its UPDATE also asks that the row's
// reclaims be what the shop read before the reservation was made (seen):
//
//	UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ? AND reclaims = ?
//
// A sweep that reclaimed this order moved reclaims, so it matches nothing;
// then the write takes the row unconditionally and looks in reclaimed
// (takeReserved). Whichever holds the row first wins, and no clock decides.
// A shop takes that slow path once per sweep that reclaimed anything of the
// product, then remembers the new count.

// takeUnswept is orderdb.TakeUnits while the product's reclaims are still
// what the shop saw: its arguments are TakeUnits', then seen.
const takeUnswept = orderdb.TakeUnits + " AND reclaims = ?"

// reclaimsSeen returns the product's reclaims as this shop last read them,
// reading them first if it never has. Call it before the reservation is
// made. Errors: the database's.
func (s *Seller) reclaimsSeen(ctx context.Context, product string) (int64, error) {
	if v, ok := s.reclaims.Load(product); ok {
		return v.(*atomic.Int64).Load(), nil
	}
	var n int64
	if err := s.db.WithContext(ctx).Raw("SELECT reclaims FROM products WHERE id = ?", product).Row().Scan(&n); err != nil {
		return 0, err
	}
	s.rememberReclaims(product, n)
	return n, nil
}

// rememberReclaims stores n as the product's reclaims, for the
// reservations made from now on.
func (s *Seller) rememberReclaims(product string, n int64) {
	v, _ := s.reclaims.LoadOrStore(product, new(atomic.Int64))
	v.(*atomic.Int64).Store(n)
}

// writeReserved writes o and takes its units, unless the sweep has given
// o's reservation back; seen is reclaimsSeen's before the reservation.
// Errors: orderdb.ErrDuplicateKey (before the hot row is touched),
// orderdb.ErrNoUnits, errReclaimed, or the database's.
func (s *Seller) writeReserved(tx *gorm.DB, o orderdb.Order, seen int64) error {
	if err := orderdb.Insert(tx, o); err != nil {
		return err
	}
	return s.takeReserved(tx, o, seen)
}

// takeReserved is writeReserved's second step, after the order's INSERT:
// it takes o's units, unless the sweep reclaimed o's reservation. Errors:
// orderdb.ErrNoUnits, errReclaimed, or the database's.
func (s *Seller) takeReserved(tx *gorm.DB, o orderdb.Order, seen int64) error {
	res := tx.Exec(takeUnswept, o.Quantity, o.ProductID, o.Quantity, seen)
	if res.Error != nil || res.RowsAffected == 1 {
		return res.Error
	}
	// No units, or a sweep reclaimed since seen: take the row, then look.
	res = tx.Exec(orderdb.TakeUnits, o.Quantity, o.ProductID, o.Quantity)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return orderdb.ErrNoUnits
	}
	// A plain SELECT, locking nothing, and the transaction's first read: its
	// snapshot (InnoDB takes it here, not at BEGIN) sees the sweep's commit.
	var reclaimed, now int64
	err := tx.Raw("SELECT (SELECT COUNT(*) FROM reclaimed WHERE id = ?), reclaims FROM products WHERE id = ?", o.ID, o.ProductID).
		Row().Scan(&reclaimed, &now)
	if err != nil {
		return err
	}
	s.rememberReclaims(o.ProductID, now)
	if reclaimed > 0 {
		return fmt.Errorf("%w: order %s", errReclaimed, o.ID)
	}
	return nil
}
