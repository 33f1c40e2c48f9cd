// Package stock owns the products table: a product, its stock, and the
// settings of its sale (strategy, lock TTL, simulated work and faults). It
// validates products and turns the drivers' errors into its sentinels
// (errors.go), which every keeper of the stock answers with and package
// order returns as they are. Deducting stock is package order's job.
package stock

import (
	"time"

	"github.com/flashsale/flashsale/internal/strategy"
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
	// Strategy chooses how this product's orders keep the stock right: a
	// lock mode (which then guards both the dedupe lock and the product
	// lock), fenced, or one of the lock-free strategies.
	Strategy strategy.Name
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
	// LateCommit, when above zero, makes some orders hold back their commit
	// and the lock's renewals this long, then commit regardless of the lock:
	// how the demo breaks a lease without a fencing token.
	LateCommit time.Duration
	// LateCommitEvery picks the late orders per shop process: the first,
	// then every LateCommitEvery-th (1: all). Zero means
	// DefaultLateCommitEvery when LateCommit is set.
	LateCommitEvery int
	// BatchMax, when above zero, lets one lock holder serve up to BatchMax
	// queued buyers in one transaction (strategy.Name.Batches); zero means
	// one buyer per lock.
	BatchMax int
	// Buckets, when 2 or more, splits the stock so as many buyers can take
	// a unit at once: rows of stock_buckets for sql-atomic (RowBuckets; Create
	// splits Stock with Split, Get sums them), Redis keys for redis-decr
	// (package redisdecr). 0 or 1 means the product's one stock.
	Buckets int
	// PayWithin, when above zero, is how long a buyer has to pay: the order is
	// pending until paid, and its units return if it expires or is cancelled.
	// Zero means every order is final when written.
	PayWithin time.Duration
	// CreatedAt is set by Create.
	CreatedAt time.Time
}
