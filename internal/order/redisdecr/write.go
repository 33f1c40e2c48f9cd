package redisdecr

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"gorm.io/gorm"
)

// redis-decr's write, and how it meets the sweep.
//
// The sweep (reclaim.go) gives back the reservations whose hold ran out
// with no order, and a shop that was only slow may come back with one of
// those orders: the database must refuse it, or the unit is sold and on
// sale again. The two meet at the product's row. The sweep takes the row
// before it looks for the orders, writes its rows to reclaimed, and adds 1
// to the row's reclaims, all in one transaction, and only after that
// commit gives the units back to Redis.
//
// The write, like sql-atomic's, inserts the order first and takes the units
// last, with the conditional UPDATE, so that it holds the hot row for one
// statement and the commit, no longer. Its UPDATE also asks that reclaims
// be what the shop read before the reservation was made (seen):
//
//	UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ? AND reclaims = ?
//
// A sweep can only reclaim a reservation that exists, so one that reclaimed
// this order's committed after seen was read, and reclaims has moved on:
// the UPDATE, which reads the row as it is once it holds it, matches
// nothing. Then the write takes the row without the condition, and looks in
// reclaimed with a plain SELECT: the transaction's first read, so its
// snapshot is taken now, after the sweep committed and let the row go (on
// InnoDB, REPEATABLE READ takes it at the first read, not at BEGIN; no
// statement before it reads, the INSERT and the UPDATEs lock instead). It
// locks nothing, so it holds up no other product's sweep. Its own id there
// is errReclaimed, and the rollback takes the order back out. If the write
// holds the row first, the sweep waits for its commit and finds the order.
// Either way one of them wins, and no clock decides.
//
// That slow path is taken once after each sweep that reclaimed anything
// of the product (a dead shop's reservations, rare), by each shop, which
// then remembers the new count. seen may be older than that, never
// wrong: any count read before the reservation was made will do.

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

// writeReserved writes o and takes its units in the database, for
// redis-decr, unless the sweep has given o's reservation back; seen is what
// reclaimsSeen said before the reservation was made. Errors:
// orderdb.ErrDuplicateKey, orderdb.ErrNoUnits, errReclaimed, or the database's. A
// buyer Redis let through twice (it lost its buyers) fails on the unique
// key before the hot row is touched.
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
