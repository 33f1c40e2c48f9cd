package order

import (
	"context"
	"slices"
	"time"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Observer hears how a Service's orders go, for metrics (package metrics
// implements it). Its methods are called concurrently, from the goroutines
// placing orders, and must return at once. The strategy is the product's,
// or "" when Place failed before it knew the product.
type Observer interface {
	// Placed is called once per Place, when it returns: outcome is
	// Outcome(err), or "canceled" if the caller's context ended first, and
	// d how long it took.
	Placed(s strategy.Name, outcome string, d time.Duration)
	// LockWaited is called once per ask for a product lock (one per
	// order, or one per batch), when it ends: outcome is "acquired" or
	// Outcome of the error, and d how long the ask waited.
	LockWaited(s strategy.Name, outcome string, d time.Duration)
	// Held is called when a product lock is released, with how long it was
	// held; a strategy without a lock tells its hot row's hold instead, when
	// its COMMIT or ROLLBACK answers (orderdb.RowHold).
	Held(s strategy.Name, d time.Duration)
	// Happened is called for each of the events Events counts.
	Happened(s strategy.Name, e Event)
	// Batched is called for each batch served, with how many buyers it
	// answered, and for each group commit of redis-decr, with how many
	// orders it wrote together (redisdecr/group.go).
	Batched(s strategy.Name, buyers int)
}

// Event is one of the things Events counts, as Observer hears of it.
type Event string

// The events.
const (
	EventLateCommit Event = "late_commit" // a commit held back by the late-commit fault
	EventFencedOut  Event = "fenced_out"  // a holder refused for its stale fencing token
	EventLockLost   Event = "lock_lost"   // a holder found its lock lost before it wrote
	EventGivenBack  Event = "given_back"  // a redis-decr reservation given back
	EventReclaimed  Event = "reclaimed"   // a stale redis-decr reservation given back by the sweep
	EventWritten    Event = "written"     // a queued order written by this shop's consumer
	EventRefused    Event = "refused"     // a queued order the database refused, dead-lettered
	// A sql-version try that lost: when it came to write, the product's
	// version had moved on, so its read and its work were thrown away.
	EventVersionMoved Event = "version_moved"
	// An order's life after it was written (package life), for a product
	// with a pay window: paid, expired (by a sweep), cancelled (by its
	// buyer), and each unit an expired or cancelled order put back on sale.
	EventPaid      Event = "paid"
	EventExpired   Event = "expired"
	EventCancelled Event = "cancelled"
	EventReturned  Event = "returned"
)

// OutcomeQueued is Placed's outcome for an order accepted into its
// product's queue (redis-queue): answered 202, written later.
const OutcomeQueued = "queued"

// outcomeFor is Outcome for an order or a lock asked for on ctx: once ctx
// has ended, a failure is "canceled" whatever the error says (a buyer who
// hangs up while queued for the lock gets ErrLockTimeout wrapping
// context.Canceled; it was not the lock wait that ran out).
func outcomeFor(ctx context.Context, err error) string {
	if err != nil && ctx.Err() != nil {
		return "canceled"
	}
	return Outcome(err)
}

// noObserver is the Observer of a Service built without one.
type noObserver struct{}

func (noObserver) Placed(strategy.Name, string, time.Duration)     {}
func (noObserver) LockWaited(strategy.Name, string, time.Duration) {}
func (noObserver) Held(strategy.Name, time.Duration)               {}
func (noObserver) Happened(strategy.Name, Event)                   {}
func (noObserver) Batched(strategy.Name, int)                      {}

// held tells of one hold of p's product lock, or hot row, d long: to the
// observer, and to p's Events.
func (s *Service) held(p stock.Product, d time.Duration) {
	c := s.events(p.ID)
	c.holds.Add(1)
	c.held.Add(int64(d))
	s.opts.Observer.Held(p.Strategy, d)
}

// rowHeld tells of h, p's hot row's hold, if it began.
func (s *Service) rowHeld(p stock.Product, h *orderdb.RowHold) {
	if d, ok := h.Held(); ok {
		s.held(p, d)
	}
}

// happened counts e for product, sold with strategy sn, in its Events and
// for the observer.
func (s *Service) happened(product string, sn strategy.Name, e Event) {
	c := s.events(product)
	if i := slices.Index(counted[:], e); i >= 0 {
		c.n[i].Add(1)
	}
	s.opts.Observer.Happened(sn, e)
}
