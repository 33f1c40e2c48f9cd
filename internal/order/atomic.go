package order

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/stock"
)

// What insertAndDeduct says when the database refused: the buyer has an
// order already (the unique key), or the stock is below the quantity (the
// conditional UPDATE matched no row).
var (
	errDuplicateKey = errors.New("order: the buyer has an order (unique key)")
	errNoUnits      = errors.New("order: no units left for the conditional update")
)

// placeAtomic is strategy sql-atomic: no lock at all. The database does
// the read-check-write in one statement, the conditional UPDATE
// (takeUnits), which takes the row's lock, checks and writes at once, so
// two buyers can never both read n: zero rows affected means sold out.
// One order per buyer is the unique key orders_unique_buyer: a repeated
// click's INSERT fails and its transaction rolls back, stock update and
// all.
func (s *Service) placeAtomic(ctx context.Context, p stock.Product, req Request) (Order, error) {
	// The business work needs no lock here: it runs before the
	// transaction, beside the other buyers' instead of queued behind them.
	if err := s.work(ctx, p); err != nil {
		return Order{}, fmt.Errorf("order: %w", err)
	}
	o := newOrder(p, req)
	err := s.commit(ctx, nil, p, func(tx *gorm.DB) error {
		return insertAndDeduct(tx, o)
	})
	switch {
	case errors.Is(err, errNoUnits):
		s.learnSoldOut(ctx, p.ID)
		return Order{}, fmt.Errorf("%w: %q has fewer than %d left", ErrSoldOut, p.ID, req.Quantity)
	case errors.Is(err, errDuplicateKey):
		return Order{}, s.duplicate(ctx, p.ID, req.UserID)
	case err != nil:
		if err := s.afterFailure(ctx, o, err); err != nil {
			return Order{}, fromWrite(ctx, err)
		}
	}
	return o, nil
}

// insertAndDeduct writes o and takes its units, for sql-atomic (redis-decr
// writes with writeReserved, which checks the sweep too): the INSERT
// first, so a repeated click fails on the unique key before it touches the
// hot row; the conditional UPDATE last, so the row's lock is held from it
// to the commit and no longer. Errors: errDuplicateKey, errNoUnits, or the
// database's.
func insertAndDeduct(tx *gorm.DB, o Order) error {
	if err := insertOrder(tx, o); err != nil {
		return err
	}
	res := tx.Exec(takeUnits, o.Quantity, o.ProductID, o.Quantity)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return errNoUnits
	}
	return nil
}

// insertOrder inserts o's row with its unique buyer key: errDuplicateKey
// if the buyer has an order for the product already, or the database's
// error.
func insertOrder(tx *gorm.DB, o Order) error {
	row := toUniqueRow(o)
	if err := tx.Create(&row).Error; err != nil {
		if stock.IsDuplicateKey(err) {
			return errDuplicateKey
		}
		return err
	}
	return nil
}

// learnSoldOut reads the stock after a conditional update found too few
// units, and remembers the product as sold out if none are left (a buyer
// asking for 2 of 1 left has not seen a sold-out product). A failed read
// changes nothing.
func (s *Service) learnSoldOut(ctx context.Context, id string) {
	if left, err := readStock(ctx, s.db, id); err == nil && left == 0 {
		s.markSoldOut(id)
	}
}

// duplicate is the error for user, who already has an order for product:
// a *DuplicateOrderError naming that order, if the database can say which
// (else with no OrderID).
func (s *Service) duplicate(ctx context.Context, product, user string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	var id string
	_ = s.db.WithContext(ctx).
		Raw("SELECT id FROM orders WHERE product_id = ? AND user_id = ? LIMIT 1", product, user).
		Row().Scan(&id)
	return &DuplicateOrderError{OrderID: id, UserID: user, ProductID: product}
}
