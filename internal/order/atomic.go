package order

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// placeAtomic is strategy sql-atomic: no lock at all. The database does
// the read-check-write in one statement, the conditional UPDATE
// (orderdb.TakeUnits), which takes the row's lock, checks and writes at once,
// so two buyers can never both read n: zero rows affected means sold out.
// One order per buyer is the unique key orders_unique_buyer: a repeated
// click's INSERT fails and its transaction rolls back, stock update and
// all. A product whose stock is split over buckets (stock.Product.Buckets)
// sells the same way, one bucket's row at a time (package buckets).
func (s *Service) placeAtomic(ctx context.Context, p stock.Product, req Request) (Order, error) {
	// The business work needs no lock here: it runs before the
	// transaction, beside the other buyers' instead of queued behind them.
	if err := s.work(ctx, p); err != nil {
		return Order{}, fmt.Errorf("order: %w", err)
	}
	o := s.newOrder(p, req)
	if p.Buckets > 1 {
		// The stock split over rows: package buckets sells it.
		if err := s.buckets.Place(ctx, p, o); err != nil {
			return Order{}, err
		}
		return o, nil
	}
	if err := s.sellAtomic(ctx, p, o); err != nil {
		return Order{}, err
	}
	return o, nil
}

// sellAtomic writes o and takes its units from p's row in one
// transaction, and says what its failure means for the buyer.
func (s *Service) sellAtomic(ctx context.Context, p stock.Product, o Order) error {
	row := s.writer.RowHold()
	err := s.writer.Commit(ctx, nil, p, func(tx *gorm.DB) error {
		row.Began()
		if err := orderdb.InsertAndTake(tx, o, orderdb.NoBucket); err != nil {
			return err
		}
		row.Took() // the UPDATE, its last statement, answered
		return nil
	})
	s.rowHeld(p, row)
	switch {
	case errors.Is(err, orderdb.ErrNoUnits):
		s.learnSoldOut(ctx, p.ID)
		return fmt.Errorf("%w: %q has fewer than %d left", ErrSoldOut, p.ID, o.Quantity)
	case errors.Is(err, orderdb.ErrDuplicateKey):
		return s.writer.Duplicate(ctx, p.ID, o.UserID)
	case err != nil:
		if err := s.writer.AfterFailure(ctx, o, err); err != nil {
			return orderdb.FromWrite(ctx, err)
		}
	}
	return nil
}

// learnSoldOut reads the stock after a conditional update found too few
// units, and remembers the product as sold out if none are left (a buyer
// asking for 2 of 1 left has not seen a sold-out product). A failed read
// changes nothing.
func (s *Service) learnSoldOut(ctx context.Context, id string) {
	if left, err := orderdb.ReadStock(ctx, s.db, id); err == nil && left == 0 {
		s.markSoldOut(id)
	}
}
