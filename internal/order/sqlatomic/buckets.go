package sqlatomic

// sql-atomic over K stock buckets (stock.Product.Buckets >= 2): a hot
// product's stock split over K rows of stock_buckets, so that K buyers can
// take a unit at once, each holding one row's lock, where one row would
// queue them all behind its lock. A product without buckets never comes
// here (atomic.go).
//
// A buyer goes first to the bucket a hash of their id names
// (orderdb.HomeBucket), and to the others in turn (home+1, home+2, ...
// mod K) when it is empty. Each try is one transaction, the same as
// sql-atomic's without buckets (orderdb.InsertAndTake): the buyer's order
// row with its unique key, then the one conditional UPDATE, on that
// bucket's row.
//
// Why it is exact:
//   - No oversell: every unit is taken by the conditional UPDATE on its
//     bucket, which checks and writes under the row's lock.
//   - One order per buyer across all buckets, the fallback included: the
//     claim is the buyer's order row, not the bucket. orders_unique_buyer
//     allows one row per (product, buyer) whatever the bucket, and a try
//     whose bucket was empty rolls back, its row with it, before the next
//     try inserts it again. Two tries of one buyer (a repeated click)
//     meet on the unique key, not on a bucket.
//   - Never "sold out" while a bucket holds a unit: the answer comes only
//     after every bucket was found with fewer units than asked for, by a
//     conditional UPDATE that read its latest committed value (in this
//     request, or an earlier one of this process: see known). Without a
//     pay window a bucket only goes down (a try that rolls back never
//     took), so a bucket found empty stays empty, and when the last one
//     is found empty they all are. With one, an order that ends unpaid
//     gives its units back to its bucket, and nothing is remembered.
//
// Quantities are taken from one bucket: a buyer asking for 2 when two
// buckets hold 1 each is told sold out.

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// placeBuckets writes o, an order of p (p.Buckets >= 2), taking its
// units from the buyer's home bucket, or from the next that holds enough.
//
// Errors, and then nothing was written: stock.ErrSoldOut when no bucket
// holds o.Quantity; a *orderdb.DuplicateOrderError when the buyer has an
// order for p; otherwise what orderdb.FromWrite makes of the database's
// error (stock.ErrUnavailable, orderdb.ErrInDoubt, ctx's error).
func (s *Seller) placeBuckets(ctx context.Context, p stock.Product, o orderdb.Order) error {
	k := p.Buckets
	kn := s.knownOf(p.ID, k)
	home := orderdb.HomeBucket(o.UserID, k)
	for i := range k {
		b := (home + i) % k
		if p.PayWithin == 0 && kn.short(b, o.Quantity) {
			continue // found with fewer units before, and it never grows
		}
		row := s.w.RowHold()
		err := s.w.Commit(ctx, nil, p, func(tx *gorm.DB) error {
			row.Began()
			if err := orderdb.InsertAndTake(tx, o, b); err != nil {
				return err
			}
			row.Took() // the bucket's UPDATE, the last statement, answered
			return nil
		})
		s.held(p, row)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, orderdb.ErrNoUnits):
			if p.PayWithin == 0 { // else an unpaid order may give units back
				kn.mark(b, o.Quantity)
			}
			// and fall back to the next bucket
		case errors.Is(err, orderdb.ErrDuplicateKey):
			return s.w.Duplicate(ctx, p.ID, o.UserID)
		default:
			o.Bucket = &b // the row a COMMIT still landing holds (Settled)
			if err := s.w.AfterFailure(ctx, o, err); err != nil {
				return orderdb.FromWrite(ctx, err)
			}
			return nil
		}
	}
	if kn.empty() {
		s.soldOut(p.ID)
	}
	return fmt.Errorf("%w: %q has no bucket with %d left", stock.ErrSoldOut, p.ID, o.Quantity)
}

// knownOf returns what this Seller knows of product's k buckets.
func (s *Seller) knownOf(product string, k int) *known {
	if kn, ok := s.known.Load(product); ok {
		return kn.(*known)
	}
	kn, _ := s.known.LoadOrStore(product, &known{below: make([]int, k)})
	return kn.(*known)
}
