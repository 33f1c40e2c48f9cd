// Package order owns the order flow of a flash sale, one way per strategy
// (package strategy):
//
//   - the locking strategies (off, naive, lua, redlock, fenced) take the
//     buyer's dedupe lock, take the product lock, and inside it read the
//     stock, check it, and write the deduction and the order row in one
//     transaction (locked.go); fenced first registers its lock's
//     fencing token in that transaction, before the read (locked_fence.go);
//   - sql-for-update takes the database's own lock: the product's row,
//     locked by the read (SELECT … FOR UPDATE) and held across the check,
//     the work and the write, to the commit (forupdate.go);
//   - sql-version is the optimistic lock: read the stock and the row's
//     version, work, and write only if the version has not moved, else
//     read and work again, a few times (version.go);
//   - sql-atomic takes no lock: a conditional UPDATE and a unique key, in
//     one transaction (package sqlatomic);
//   - sql-one-trip is sql-atomic's transaction as one stored procedure,
//     sent in one round trip (onetrip.go; on SQLite, sql-atomic's);
//   - redis-decr reserves the units in Redis with one script, then writes
//     the order, and gives the reservation back if the write fails; every
//     shop sweeps Redis's stock of the products it sells back to the
//     database's once a second (package redisdecr);
//   - redis-queue takes the units and queues the order in Redis with one
//     script, answers at once, and the consumers of every shop write the
//     queued orders in batches (package redisqueue).
//
// It also owns the audit that tells, from the database, whether a sale
// oversold or took duplicate orders, and the late-commit fault that shows
// why a lease alone is not a mutex (commit_late.go). What every strategy
// shares when it writes a sale (the order, the errors a sale ends with,
// the one transaction, and what a COMMIT whose answer was lost means) is
// package orderdb's.
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

import "github.com/flashsale/flashsale/internal/order/orderdb"

// MaxQuantity is the most units one order may take.
const MaxQuantity = 5

// Request asks for Quantity units of ProductID for UserID.
type Request struct {
	UserID    string
	ProductID string
	Quantity  int
}

// Order is a placed order, as stored in the orders table (package orderdb's,
// which every strategy shares).
type Order = orderdb.Order
