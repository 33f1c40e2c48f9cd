package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Audit is what the database says about one product's sale.
type Audit struct {
	ProductID    string
	LockMode     dlock.Mode
	InitialStock int
	// Stock is the stock left as the products table says.
	Stock int
	// Orders is the number of order rows.
	Orders int
	// Sold is the sum of their quantities.
	Sold int
	// Oversold is max(0, Sold - InitialStock): units sold that never existed.
	Oversold int
	// DuplicateOrders counts orders beyond the first per buyer.
	DuplicateOrders int
	// Consistent is Stock + Sold == InitialStock. A lost update (two buyers
	// writing back the same stock) breaks it even before the sale oversells.
	Consistent bool
}

// Audit computes the figures of productID's sale with SQL over the products
// and orders tables, in one transaction so that they describe one moment. It
// keeps no counters of its own, so any process sharing the database gives the
// same answer. Safe for concurrent use, also while orders are placed.
//
// Errors: a *FieldError wrapping ErrInvalid for a malformed id;
// stock.ErrNotFound for an unknown product; ErrUnavailable when the database
// cannot be reached.
func (s *Service) Audit(ctx context.Context, productID string) (Audit, error) {
	if err := checkID("product_id", productID); err != nil {
		return Audit{}, err
	}
	a := Audit{ProductID: productID}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var mode string
		err := tx.Raw("SELECT lock_mode, initial_stock, stock FROM products WHERE id = ?", productID).
			Row().Scan(&mode, &a.InitialStock, &a.Stock)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: product %q", stock.ErrNotFound, productID)
		}
		if err != nil {
			return err
		}
		a.LockMode = dlock.Mode(mode)
		// Orders per buyer first, then summed: buyers with more than one
		// order are the duplicates.
		var buyers int
		err = tx.Raw(`SELECT COUNT(*), COALESCE(SUM(n), 0), COALESCE(SUM(q), 0)
			FROM (SELECT COUNT(*) AS n, SUM(quantity) AS q
			      FROM orders WHERE product_id = ? GROUP BY user_id) AS per_buyer`, productID).
			Row().Scan(&buyers, &a.Orders, &a.Sold)
		a.DuplicateOrders = a.Orders - buyers
		return err
	})
	switch {
	case errors.Is(err, stock.ErrNotFound):
		return Audit{}, err
	case stock.IsConnError(err):
		return Audit{}, fmt.Errorf("%w: database: %w", ErrUnavailable, err)
	case err != nil:
		return Audit{}, fmt.Errorf("order: audit %q: %w", productID, err)
	}
	a.Oversold = max(0, a.Sold-a.InitialStock)
	a.Consistent = a.Stock+a.Sold == a.InitialStock
	return a, nil
}
