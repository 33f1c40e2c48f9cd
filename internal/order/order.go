// Package order owns the order flow of a flash sale, one way per strategy
// (package strategy):
//
//   - the locking strategies (off, naive, lua, redlock, fenced) take the
//     buyer's dedupe lock, take the product lock, and inside it read the
//     stock, check it, and write the deduction and the order row in one
//     transaction (place_locked.go); fenced first registers its lock's
//     fencing token in that transaction, before the read (fence.go);
//   - sql-atomic takes no lock: a conditional UPDATE and a unique key, in
//     one transaction (place_atomic.go);
//   - redis-decr reserves the units in Redis with one script, then writes
//     the order, and gives the reservation back if the write fails
//     (place_reserved.go).
//
// It also owns the audit that tells, from the database, whether a sale
// oversold or took duplicate orders, and the late-commit fault that shows
// why a lease alone is not a mutex (late.go).
//
// With strategy off the locks are no-ops, and concurrent buyers oversell
// while repeated clicks create duplicate orders: that is the lesson the
// other strategies answer.
//
// A Service stands for one shop process and remembers only what cannot go
// stale: a product's settings, that it sold out, and what happened to its
// orders in this process (Events). Everything the audit reports comes from
// the backends.
package order

import (
	"errors"
	"time"

	"github.com/flashsale/flashsale/internal/strategy"
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
	// the database could not be reached. Nothing was written; the buyer may
	// retry.
	ErrUnavailable = errors.New("order: backend unavailable")
	// ErrLockLost means the product lock was lost before the order was
	// written: the watchdog found it gone, or the database refused its
	// fencing token because a newer holder had registered one. Nothing was
	// written; the buyer may retry.
	ErrLockLost = errors.New("order: product lock lost")
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
	// Strategy is the product's strategy, which guarded this order.
	Strategy  strategy.Name
	CreatedAt time.Time
}
