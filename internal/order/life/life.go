// Package life owns an order's life after it is written, for a product
// with a pay window (stock.Product.PayWithin): the states, the one clock
// that decides deadlines, and each change of state as one compare-and-set
// on the order's row. An order without a pay window is written Paid.
//
//	pending ──Pay, before the deadline──▶ paid
//	   │──End(Expired), after the deadline──▶ expired
//	   └──End(Cancelled), by its buyer──▶ cancelled
//
// Every change is an UPDATE … WHERE id = ? AND state = 'pending' (and the
// deadline against the database's clock): of two racing changes exactly
// one goes through. The caller runs it in the transaction that gives the
// units back, so a unit goes back once or not at all. No stock, no lock here.
package life

import (
	"errors"
	"time"
)

// State is where an order stands; it is stored in orders.state.
type State string

// The states.
const (
	Pending   State = "pending"   // its units held for the buyer until the deadline
	Paid      State = "paid"      // sold for good
	Expired   State = "expired"   // not paid in time: its units went back on sale
	Cancelled State = "cancelled" // given up by its buyer: its units went back on sale
)

// Live reports whether an order in state s holds its units: pending or
// paid. A buyer may have one live order per product.
func (s State) Live() bool { return s == Pending || s == Paid }

// LiveSQL is the condition on the orders table for the live orders, for a
// query's WHERE: who has bought, the audit's units sold.
const LiveSQL = "state IN ('pending', 'paid')"

// Errors of the changes of state, beside stock.ErrUnknownOrder for an id
// no order has. Compare them with errors.Is; the returned errors wrap them
// with the order's id.
var (
	// ErrExpired means the order's deadline has passed: it cannot be paid
	// any more (its units go, or went, back on sale).
	ErrExpired = errors.New("order: expired")
	// ErrAlreadyPaid means the order is paid: it cannot be cancelled.
	ErrAlreadyPaid = errors.New("order: already paid")
	// ErrCancelled means its buyer cancelled the order: it cannot be paid.
	ErrCancelled = errors.New("order: cancelled")
)

// Order is an order as its life sees it.
type Order struct {
	ID, UserID, ProductID string
	Quantity              int
	// Bucket is the stock bucket its units came from; nil for the
	// product's own row.
	Bucket *int
	State  State
	// Deadline is when a pending order expires, by the database's clock;
	// zero for an order without a pay window.
	Deadline time.Time
}
