// Package stock owns the products table: a product, its stock, and the
// settings that make a flash-sale run reproducible (the strategy that guards
// it, the lock TTL, the simulated business latency inside the critical
// section, and the faults to inject). It validates products before they reach the database and turns
// the drivers' errors into this package's sentinels at the boundary.
//
// Its sentinels (errors.go) are the order flow's one vocabulary: every keeper
// of the stock (this package, the Redis stock of redis-decr and redis-queue,
// the orders' rows) answers with them, and package order returns them as
// they are.
//
// Deducting stock is the order flow's job (package order): how it is made
// safe is the product's strategy, and the strategies live there.
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
	// LateCommit, when above zero, makes some orders commit late: after
	// their statements ran, the shop holds back the commit and the lock's
	// renewals this long, then commits regardless of the lock, as a commit
	// already on the wire when the network stalled would. It is how the
	// demo breaks a lease that has no fencing token.
	LateCommit time.Duration
	// LateCommitEvery chooses the late orders: in each shop process, the
	// first order of the product to reach its commit, then every
	// LateCommitEvery-th after it (1: every order). Zero means
	// DefaultLateCommitEvery when LateCommit is set.
	LateCommitEvery int
	// BatchMax, when above zero, lets one holder of the product lock serve
	// up to BatchMax of its shop's queued buyers in one transaction (see
	// package order). Only strategies lua, redlock, fenced and etcd batch
	// (strategy.Name.Batches); zero means one buyer per lock.
	BatchMax int
	// Buckets, when 2 or more, splits the stock over that many buckets,
	// so that that many buyers can take a unit at once. For sql-atomic
	// they are rows of stock_buckets (RowBuckets): Create spreads Stock
	// over them as evenly as it goes (Split), and Get returns their sum as
	// Stock (package order's buckets sells from them). For redis-decr they
	// are Redis keys, each under a hash tag of its own (package
	// redisdecr), and the database keeps the product's one stock. 0 or 1
	// means one stock, the product's own.
	Buckets int
	// PayWithin, when above zero, is how long a buyer has to pay for an
	// order: it is pending until paid, and its units go back on sale if
	// it expires or its buyer cancels it (package order's life). Zero
	// means no pay window: every order is final the moment it is written.
	PayWithin time.Duration
	// CreatedAt is set by Create.
	CreatedAt time.Time
}
