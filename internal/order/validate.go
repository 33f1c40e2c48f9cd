package order

import (
	"fmt"

	"github.com/flashsale/flashsale/internal/stock"
)

// FieldError is the error for a request that fails validation: which field
// (named as the HTTP API spells it: user_id, product_id, quantity) and why.
// It wraps ErrInvalid, so errors.Is(err, ErrInvalid) holds; errors.As gives
// the field.
type FieldError struct {
	Field  string
	Reason string
}

// Error returns "field: reason", e.g. "quantity: must be between 1 and 5,
// got 9": written for the buyer, it can be shown as is.
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Validate is the one check of an order's fields: both ids as stock.CheckID
// says, quantity 1..MaxQuantity. It returns nil or a *FieldError naming the
// first bad field. Place calls it before anything touches Redis or the
// database; the HTTP API calls it earlier, so only valid orders queue.
func (r Request) Validate() error {
	if err := checkID("user_id", r.UserID); err != nil {
		return err
	}
	if err := checkID("product_id", r.ProductID); err != nil {
		return err
	}
	if r.Quantity < 1 || r.Quantity > MaxQuantity {
		return &FieldError{Field: "quantity", Reason: fmt.Sprintf("must be between 1 and %d, got %d", MaxQuantity, r.Quantity)}
	}
	return nil
}

// checkID returns a *FieldError for field unless id is a valid user or
// product id (stock.CheckID).
func checkID(field, id string) error {
	if err := stock.CheckID(id); err != nil {
		return &FieldError{Field: field, Reason: err.Error()}
	}
	return nil
}
