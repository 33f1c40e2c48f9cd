package redisdecr

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// The two sides of one race on the product's row: the shop's write of a
// reserved order, and the sweep that gives back a reservation whose shop
// will never write it (killed between its take and its write). The flow
// starts in Place (place.go): take.lua (redisstock/scripts) reserves the
// units and writes the reservation to the product's ledger in Redis, due
// after a hold (hold); the shop writes the order (writeReserved, below;
// grouped: group.go); every shop's sweep (reconcile.go) settles the
// reservations past their hold (reclaim, below): sold if their order is
// in the database, else given back.
//
// A hold that ran out does not mean the shop died: its INSERT may still be
// on the wire, and no clock tells dead from late. So the database decides,
// once (reclaimIn): on the product's row the sweep writes a reclaimed row
// per missing order and counts reclaims, commits, and only then gives the
// units back. Like sql-atomic's, the write inserts the order first and
// takes the units last; its UPDATE also asks that the row's reclaims be
// what the shop read before the reservation was made (seen):
//
//	UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ? AND reclaims = ?
//
// A sweep that reclaimed this order moved reclaims, so it matches nothing;
// then the write takes the row unconditionally and looks in reclaimed
// (takeReserved). Whichever holds the row first wins: a unit is never both
// sold and given back. A shop takes that slow path once per sweep that
// reclaimed anything of the product, then remembers the new count. Any
// shop may finish what another's sweep began; a give-back returns once.

// takeUnswept is orderdb.TakeUnits while the product's reclaims are still
// what the shop saw: its arguments are TakeUnits', then seen.
const takeUnswept = orderdb.TakeUnits + " AND reclaims = ?"

// errReclaimed is writeReserved's error for an order whose reservation the
// sweep gave back first.
var errReclaimed = errors.New("order: the reservation's hold ran out and it was given back before the order was written")

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

// The sweep's side, run by reconcile.go's sweep.

const (
	// reclaimGrace is a reservation's hold beyond the product's work and
	// stall: time for the order's transaction to get a connection and commit
	// under load. Shorter refuses more slow buyers (safely: their units go
	// back on sale); longer leaves a dead shop's units out longer.
	reclaimGrace = 5 * time.Second
	// reclaimBatch bounds the reservations one round of a sweep settles:
	// one IN list, one ZREM.
	reclaimBatch = 500
)

// hold is how long a reservation of p stays in the ledger before the
// sweep may reclaim it.
func (s *Seller) hold(p stock.Product) time.Duration {
	return s.reclaimGrace + p.Work + p.Stall
}

// reclaim settles product's reservations past their hold in the ledger
// under name (the product's or a bucket's), a batch at a time while ctx
// lasts, and reports whether the ledger still holds any (or could not
// tell): the sweep keeps the product until it holds none. Any number of
// shops may run it at once.
func (s *Seller) reclaim(ctx context.Context, product, name string) (pending bool, err error) {
	for {
		due, held, err := s.res.Due(ctx, name, reclaimBatch)
		if err != nil {
			return true, err
		}
		if len(due) == 0 {
			return held > 0, nil
		}
		if err := s.settleDue(ctx, product, name, due); err != nil {
			return true, err
		}
		if len(due) < reclaimBatch {
			return held > len(due), nil
		}
	}
}

// settleDue settles reservations that are past their hold, from the
// ledger kept under name: the sold ones leave the ledger, the rest are
// reclaimed (the database first, on product's row) and given back to the
// stock under name, the one they were taken from. Errors: the database's
// or Redis's; what was not done is left for the next sweep.
func (s *Seller) settleDue(ctx context.Context, product, name string, due []redisstock.Reservation) error {
	res := s.res
	// 1. Most are sold: one plain read finds them, with no lock.
	sold, err := ordersAmong(s.db.WithContext(ctx), due)
	if err != nil {
		return err
	}
	open := without(due, sold)
	if err := res.Forget(ctx, name, sold); err != nil {
		return err
	}
	if len(open) == 0 {
		return nil
	}
	// 2. The database decides, for good: sold after all, or reclaimed.
	var reclaimed []redisstock.Reservation
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		reclaimed, sold, err = reclaimIn(tx, product, open)
		return err
	})
	if err != nil {
		return err
	}
	if err := res.Forget(ctx, name, sold); err != nil {
		return err
	}
	// 3. Only now the units go back.
	for _, r := range reclaimed {
		held, err := res.GiveBack(ctx, name, r.Buyer, r.ID, r.Quantity)
		if err != nil {
			return err
		}
		if held {
			s.opts.Reclaimed(product)
		}
	}
	return nil
}

// reclaimIn is the sweep's transaction on tx for open, product's
// reservations a plain read found no order for. It takes the product's row
// first (orderdb.TakeRow: it waits for an order committing, and orders
// written later wait for it), looks again, and writes a reclaimed row for
// each still missing. It returns the reservations to give back, and those
// sold after all.
func reclaimIn(tx *gorm.DB, product string, open []redisstock.Reservation) (reclaimed, sold []redisstock.Reservation, err error) {
	if err := orderdb.TakeRow(tx, product); err != nil {
		return nil, nil, err
	}
	if sold, err = ordersAmong(tx, open); err != nil {
		return nil, nil, err
	}
	reclaimed = without(open, sold)
	if len(reclaimed) == 0 {
		return nil, sold, nil
	}
	// Every write of an order whose reservation was made before this
	// commit now looks in reclaimed before it takes its units
	// (takeReserved).
	if err := tx.Exec("UPDATE products SET reclaims = reclaims + 1 WHERE id = ?", product).Error; err != nil {
		return nil, nil, err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	rows := make([]reclaimedRow, len(reclaimed))
	for i, r := range reclaimed {
		rows[i] = reclaimedRow{ID: r.ID, ProductID: product, ReclaimedAt: now}
	}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error; err != nil {
		return nil, nil, err
	}
	return reclaimed, sold, nil
}

// reclaimedRow maps a row of table reclaimed (migrations 0016).
type reclaimedRow struct {
	ID          string    `gorm:"column:id;primaryKey"`
	ProductID   string    `gorm:"column:product_id"`
	ReclaimedAt time.Time `gorm:"column:reclaimed_at"`
}

func (reclaimedRow) TableName() string { return "reclaimed" }

// ordersAmong returns the reservations of rs whose orders are in the
// database, as db reads them.
func ordersAmong(db *gorm.DB, rs []redisstock.Reservation) ([]redisstock.Reservation, error) {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	in, err := orderdb.Written(db, ids)
	if err != nil {
		return nil, err
	}
	var sold []redisstock.Reservation
	for _, r := range rs {
		if in[r.ID] {
			sold = append(sold, r)
		}
	}
	return sold, nil
}

// without returns the reservations of rs that are not in sold.
func without(rs, sold []redisstock.Reservation) []redisstock.Reservation {
	gone := make(map[string]bool, len(sold))
	for _, r := range sold {
		gone[r.ID] = true
	}
	out := make([]redisstock.Reservation, 0, len(rs)-len(sold))
	for _, r := range rs {
		if !gone[r.ID] {
			out = append(out, r)
		}
	}
	return out
}
