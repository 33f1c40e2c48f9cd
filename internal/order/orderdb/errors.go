package orderdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/flashsale/flashsale/internal/stock"
)

// The errors about an order's row that every strategy may return, beside
// package stock's; package order returns them as its own. Compare them with
// errors.Is; returned errors wrap them with details and the cause.
var (
	// ErrDuplicateOrder means the buyer already has an order for the
	// product; the error is a *DuplicateOrderError that names it.
	ErrDuplicateOrder = errors.New("order: duplicate order")
	// ErrDuplicateRequest means another order by the same buyer for the same
	// product is in flight (a repeated click): its dedupe lock is held, or
	// its reservation in Redis is on its way to the database.
	ErrDuplicateRequest = errors.New("order: duplicate request in flight")
	// ErrInDoubt means the order's COMMIT was sent, its answer lost, and the
	// database could not tell in time whether it landed: the order may exist.
	// A retry by the same buyer gets it (ErrDuplicateOrder) or buys once, never
	// both, under fenced, etcd and the lock-free strategies. Under lua, redlock
	// and naive a COMMIT still on its way is a late commit no lease keeps out:
	// the shop abandons its locks to their TTL (order's letGo), which narrows
	// that window without closing it.
	ErrInDoubt = errors.New("order: outcome unknown, the order may exist")
)

// DuplicateOrderError is the error for a buyer who already has an order
// for the product: OrderID names it, so that a retry after ErrInDoubt
// learns which order it got. It wraps ErrDuplicateOrder.
type DuplicateOrderError struct {
	OrderID, UserID, ProductID string
}

func (e *DuplicateOrderError) Error() string {
	return fmt.Sprintf("%v: user %q already bought %q (order %s)", ErrDuplicateOrder, e.UserID, e.ProductID, e.OrderID)
}

// Unwrap returns ErrDuplicateOrder.
func (e *DuplicateOrderError) Unwrap() error { return ErrDuplicateOrder }

// FromWrite translates an error from a lock-free strategy's transaction,
// or a read on its behalf, for the buyer waiting on ctx.
func FromWrite(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrDuplicateOrder), errors.Is(err, stock.ErrSoldOut), errors.Is(err, ErrInDoubt):
		return err
	case ctx.Err() != nil:
		// The driver, or database/sql's rollback on cancel, may say only
		// "canceled" or "transaction done" where the caller's deadline
		// passed (see transact): the caller's reason comes first.
		return fmt.Errorf("order: %w: %w", ctx.Err(), err)
	case stock.IsConnError(err), stock.IsConflict(err):
		return fmt.Errorf("%w: database: %w", stock.ErrUnavailable, err)
	}
	return fmt.Errorf("order: %w", err)
}
