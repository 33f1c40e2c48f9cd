package redisdecr

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Reclaiming: the sweep's second step (reconcile.go) gives back the
// redis-decr reservations whose shop will never finish them.
//
// A reservation is finished by its shop: the order is written, or the
// units are given back. A shop killed between its take and its write
// does neither, and nobody else knew of the reservation, so its units
// stayed out of Redis for good (sold 4 of 5: Redis 0, the database 1).
// Now every take is also written to the product's ledger in Redis (package
// redisstock), due after a hold: reclaimGrace, plus the product's business
// work and its stall, the longest a healthy shop spends between its take
// and its write. Every shop's sweep asks the ledger for the reservations
// past their hold, and settles them: those whose order is in the
// database are sold (they leave the ledger), the rest are given back.
//
// A hold that ran out does not mean the shop died. It may be alive and slow
// (a GC pause, a stalled network) with its order's INSERT still on its way,
// and no bound on time can tell "dead" from "late": that is the late commit
// that breaks every lease. So the database decides, in one place, for good.
// In one transaction the sweep takes the product's row (as
// orderdb.Writer.Settled does, waiting for any order of it that is
// committing), looks for the orders, writes a row to table reclaimed for
// each that is not there, counts the reclaim on the row (reclaims), and
// commits; only then does it give the units back in Redis. The shop's write
// takes its units on the same row only while reclaims are what it read
// before its reservation was made, and looks in reclaimed when they moved
// (write.go). Whichever takes the row first wins: the order is written and
// the sweep finds it, or the reservation is reclaimed and the order refused
// (the buyer is told stock.ErrUnavailable, and may buy again). A unit is
// never both sold and given back, however late the commit.
//
// Every shop sweeps, and any of them may finish what another began: a
// sweep that dies after its commit leaves the reservation in the ledger,
// and the next one finds the reclaimed row already there and gives the
// units back. The give-back script gives a reservation back once, only if
// it is still its buyer's current one, and leaves the given-back mark
// otherwise; so sweeps racing each other, the owner's own give-back or
// its settlement return the units once.
const (
	// reclaimGrace is a reservation's hold beyond the product's work and
	// stall: time for the order's transaction to get a connection and
	// commit under load. The sweep runs every sweepEvery, in turns, so a
	// dead shop's units are back within reclaimGrace + work + stall + two
	// sweepEvery of its take: 7.3 s with the default products' 2 ms of
	// work and 300 ms stalls (three, 8.3 s, when the shop taking the turns
	// cannot settle: sweepStuck), within the 10 s that sweepFor keeps
	// sweeping after the last ask (and a product with reservations in its
	// ledger is swept until they are settled, asked or not). A shorter
	// hold refuses more slow buyers (safely: their units go back on sale);
	// a longer one leaves a dead shop's units out longer.
	reclaimGrace = 5 * time.Second
	// reclaimBatch bounds the reservations one round of a sweep settles:
	// one IN list, one ZREM.
	reclaimBatch = 500
)

// errReclaimed is writeReserved's error for an order whose reservation the
// sweep gave back first.
var errReclaimed = errors.New("order: the reservation's hold ran out and it was given back before the order was written")

// hold is how long a reservation of p stays in the ledger before the
// sweep may reclaim it.
func (s *Seller) hold(p stock.Product) time.Duration {
	return s.reclaimGrace + p.Work + p.Stall
}

// reclaim settles product's reservations past their hold in the ledger
// kept under name (product's own, or one of its buckets'), a batch at a
// time, for as long as ctx lasts, and reports whether the ledger still
// holds any reservation (due or not, or it could not tell): the sweep
// keeps the product until it holds none. Safe to run in any number of
// shops at once.
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

// reclaimIn is the sweep's transaction on tx, for reservations open of
// product whose orders a plain read did not find. It takes the product's
// row first (orderdb.TakeRow, as in orderdb.Writer.Settled: an order of it that
// is committing holds the row until it lands or rolls back, and every order
// written after this transaction takes the row after it), looks for the
// orders again, and writes a reclaimed row for each reservation that has
// none (one that is there already, from a sweep that died before its
// give-back, stays). It returns the reservations to give back, and those
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
	// (write.go).
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
	var found []string
	if err := db.Raw("SELECT id FROM orders WHERE id IN ?", ids).Scan(&found).Error; err != nil {
		return nil, err
	}
	in := make(map[string]bool, len(found))
	for _, id := range found {
		in[id] = true
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
