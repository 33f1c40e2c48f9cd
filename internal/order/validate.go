package order

import (
	"fmt"

	"github.com/flashsale/flashsale/internal/stock"
)

// validate checks r before anything touches Redis or the database. The
// error wraps ErrInvalid and names the field.
func (r Request) validate() error {
	if !stock.ValidID(r.UserID) {
		return fmt.Errorf("%w: user_id must be 1..%d characters of [A-Za-z0-9._:-]", ErrInvalid, stock.MaxIDLen)
	}
	if !stock.ValidID(r.ProductID) {
		return fmt.Errorf("%w: product_id must be 1..%d characters of [A-Za-z0-9._:-]", ErrInvalid, stock.MaxIDLen)
	}
	if r.Quantity < 1 || r.Quantity > MaxQuantity {
		return fmt.Errorf("%w: quantity must be 1..%d, got %d", ErrInvalid, MaxQuantity, r.Quantity)
	}
	return nil
}
