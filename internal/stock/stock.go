// Package stock owns the products table: a product, its stock, and the
// settings that make a flash-sale run reproducible (the lock mode that guards
// it, the lock TTL, and the simulated business latency inside the critical
// section). It validates products before they reach the database and turns
// the drivers' errors into this package's sentinels at the boundary.
//
// Deducting stock is the order flow's job (package order): the deduction is
// only safe inside the product lock, so it lives next to that lock.
package stock

import (
	"errors"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
)

// Errors returned by Store. Compare them with errors.Is; the returned errors
// wrap them with the product id or the offending field.
var (
	// ErrNotFound means no product has the given id.
	ErrNotFound = errors.New("stock: not found")
	// ErrAlreadyExists means a product with the given id exists already.
	ErrAlreadyExists = errors.New("stock: already exists")
	// ErrInvalid means a product or an id failed validation; the message
	// names the field and says why.
	ErrInvalid = errors.New("stock: invalid")
	// ErrUnavailable means the database could not be reached.
	ErrUnavailable = errors.New("stock: database unavailable")
)

// Product is one product on sale and the settings of its sale. It is a plain
// value, safe to copy and to share once built.
type Product struct {
	// ID is 1..64 characters of [A-Za-z0-9._:-].
	ID string
	// Name is free text up to MaxNameLen characters; empty means ID.
	Name string
	// Stock is the number of units left.
	Stock int
	// InitialStock is the stock the sale started with. Create sets it to
	// Stock; the audit compares against it.
	InitialStock int
	// LockMode chooses the lock that guards this product's orders (both the
	// dedupe lock and the product lock).
	LockMode dlock.Mode
	// LockTTL is how long a lock lives unless renewed; zero means
	// DefaultLockTTL.
	LockTTL time.Duration
	// Work is the simulated business latency inside the critical section.
	Work time.Duration
	// Stall is an extra delay inside the critical section, taken with
	// probability StallRate: a GC pause or a slow payment call. A stall
	// longer than LockTTL is how the demo breaks a naive lock.
	Stall time.Duration
	// StallRate is the probability of a stall, 0..1.
	StallRate float64
	// CreatedAt is set by Create.
	CreatedAt time.Time
}
