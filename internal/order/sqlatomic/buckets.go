package sqlatomic

// sql-atomic over K stock buckets (stock.Product.Buckets >= 2): the stock
// split over K rows of stock_buckets, so K buyers take a unit at once, each
// holding one row's lock. A buyer tries their home bucket
// (orderdb.HomeBucket), then the others in turn; each try is sql-atomic's
// transaction (orderdb.InsertAndTake) on that bucket's row.
//
// Why it is exact: every unit is taken by the conditional UPDATE on its
// bucket; one order per buyer across buckets is the order row's unique key
// (an empty bucket's try rolls back, its row with it); and "sold out" comes
// only after every bucket was found short by an UPDATE that read its latest
// committed value. Without a pay window a bucket only goes down, so one
// found empty stays empty (known). A quantity comes from one bucket.

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
