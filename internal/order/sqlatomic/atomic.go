// Package sqlatomic is strategy sql-atomic: no lock. The conditional UPDATE
// (orderdb.TakeUnits) takes the row's lock, checks and writes in one
// statement, so two buyers never both read n: zero rows means sold out. The
// unique key orders_unique_buyer keeps one order per buyer: a repeated
// click's INSERT fails and its transaction rolls back. Bucketed products
// sell one bucket's row at a time (buckets.go). Package order's Service
// sells through a Seller, after the business work, which needs no lock here.
package sqlatomic

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// Seller sells sql-atomic products. It is safe for concurrent use; one
// Seller stands for one shop process, and any number of them may share a
// database.
type Seller struct {
	w       *orderdb.Writer
	soldOut func(product string)
	held    func(p stock.Product, h *orderdb.RowHold)
	known   sync.Map // product id -> *known, of its buckets
}

// New returns a Seller that writes with w. soldOut, if not nil, hears of a
// product found with no unit left (in its row or every bucket); held, if
// not nil, of each try's hold of its row once its transaction ended. Both
// must be safe for concurrent use.
func New(w *orderdb.Writer, soldOut func(product string), held func(p stock.Product, h *orderdb.RowHold)) *Seller {
	if soldOut == nil {
		soldOut = func(string) {}
	}
	if held == nil {
		held = func(stock.Product, *orderdb.RowHold) {}
	}
	return &Seller{w: w, soldOut: soldOut, held: held}
}

// Place writes o, an order of p, and takes its units: from p's row (Sell),
// or, for a product whose stock is split over buckets, from the buyer's
// home bucket or the next that holds enough (placeBuckets).
//
// Errors, and then nothing was written: stock.ErrSoldOut; a
// *orderdb.DuplicateOrderError when the buyer has an order for p;
// otherwise what orderdb.FromWrite makes of the database's error
// (stock.ErrUnavailable, orderdb.ErrInDoubt, ctx's error).
func (s *Seller) Place(ctx context.Context, p stock.Product, o orderdb.Order) error {
	if p.Buckets > 1 {
		return s.placeBuckets(ctx, p, o)
	}
	return s.Sell(ctx, p, o)
}

// Sell writes o and takes its units from p's row in one transaction, and
// says what its failure means for the buyer (Place's errors).
func (s *Seller) Sell(ctx context.Context, p stock.Product, o orderdb.Order) error {
	row := s.w.RowHold()
	err := s.w.Commit(ctx, nil, p, func(tx *gorm.DB) error {
		row.Began()
		if err := orderdb.InsertAndTake(tx, o, orderdb.NoBucket); err != nil {
			return err
		}
		row.Took() // the UPDATE, its last statement, answered
		return nil
	})
	s.held(p, row)
	switch {
	case errors.Is(err, orderdb.ErrNoUnits):
		s.learnSoldOut(ctx, p.ID)
		return fmt.Errorf("%w: %q has fewer than %d left", stock.ErrSoldOut, p.ID, o.Quantity)
	case errors.Is(err, orderdb.ErrDuplicateKey):
		return s.w.Duplicate(ctx, p.ID, o.UserID)
	case err != nil:
		if err := s.w.AfterFailure(ctx, o, err); err != nil {
			return orderdb.FromWrite(ctx, err)
		}
	}
	return nil
}

// learnSoldOut reads the stock after a conditional update found too few
// units, and tells soldOut if none are left (a buyer asking for 2 of 1
// left has not seen a sold-out product). A failed read changes nothing.
func (s *Seller) learnSoldOut(ctx context.Context, id string) {
	if left, err := orderdb.ReadStock(ctx, s.w.DB(), id); err == nil && left == 0 {
		s.soldOut(id)
	}
}
