// Package order owns the order flow of a flash sale, one way per strategy
// (package strategy):
//
//   - off, naive, lua, redlock, fenced: the buyer's dedupe lock, then the
//     product lock, and inside it read, check and write in one transaction
//     (locked.go); fenced registers its token first (locked_fence.go);
//   - sql-for-update: the product's row locked by SELECT … FOR UPDATE until
//     the commit (forupdate.go);
//   - sql-version: write only if the row's version has not moved, else read
//     and work again, a few times (version.go);
//   - sql-atomic: no lock, a conditional UPDATE and a unique key in one
//     transaction (package sqlatomic); sql-one-trip sends that transaction
//     as one stored procedure (onetrip.go);
//   - redis-decr: reserve the units in Redis with one script, write the
//     order, give the reservation back if the write fails (package redisdecr);
//   - redis-queue: take the units and queue the order in Redis with one
//     script, answer at once; consumers write the orders in batches
//     (package redisqueue).
//
// It also owns the audit (audit.go) and the late-commit fault
// (commit_late.go); what every strategy shares when it writes a sale is
// package orderdb's. With strategy off the locks are no-ops: concurrent
// buyers oversell and repeated clicks duplicate, the lesson the others
// answer. A Service is one shop process and remembers only what cannot go
// stale; everything the audit reports comes from the backends.
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
