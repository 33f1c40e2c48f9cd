// Package order owns the order flow of a flash sale: validate the request,
// load the product, take the buyer's dedupe lock, take the product lock, and
// inside it read the stock, check it, and write the deduction and the order
// row in one transaction. It also owns the audit that tells, from the orders
// table alone, whether a sale oversold or took duplicate orders.
//
// Both locks use the product's lock mode (package dlock). With mode off they
// are no-ops, and concurrent buyers oversell while repeated clicks create
// duplicate orders: that is the lesson the other modes answer.
//
// A Service stands for one shop process and remembers only what cannot go
// stale: a product's settings, and that it sold out. Everything the audit
// reports comes from the database.
package order

import (
	"errors"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
)

// MaxQuantity is the most units one order may take.
const MaxQuantity = 5

// Errors returned by Service. Compare them with errors.Is; the returned
// errors wrap them with details and, where there is one, the cause (a
// dlock, stock or context error).
var (
	// ErrInvalid means the request failed validation; the error is a
	// *FieldError that names the field. Nothing was sent to Redis or the
	// database.
	ErrInvalid = errors.New("order: invalid request")
	// ErrSoldOut means the stock left is less than the quantity asked for.
	ErrSoldOut = errors.New("order: sold out")
	// ErrDuplicateOrder means the buyer already has an order for the product.
	ErrDuplicateOrder = errors.New("order: duplicate order")
	// ErrDuplicateRequest means another order by the same buyer for the same
	// product is in flight (a repeated click): its dedupe lock is held.
	ErrDuplicateRequest = errors.New("order: duplicate request in flight")
	// ErrLockTimeout means the product lock could not be taken within the
	// lock wait (or before the caller's context ended; then the error also
	// wraps ctx.Err()).
	ErrLockTimeout = errors.New("order: timed out waiting for the product lock")
	// ErrUnavailable means Redis (for redlock, a majority of its nodes) or
	// the database could not be reached, or the product lock was lost in the
	// critical section. Nothing was written; the buyer may retry.
	ErrUnavailable = errors.New("order: backend unavailable")
)

// Request asks for Quantity units of ProductID for UserID.
type Request struct {
	UserID    string
	ProductID string
	Quantity  int
}

// Order is a placed order, as stored in the orders table.
type Order struct {
	// ID is a random UUID.
	ID        string
	UserID    string
	ProductID string
	Quantity  int
	// LockMode is the mode that guarded this order, kept for the audit.
	LockMode  dlock.Mode
	CreatedAt time.Time
}
