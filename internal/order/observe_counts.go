package order

import (
	"slices"
	"sync/atomic"
	"time"
)

// Events counts what happened to one product's orders in one shop process
// (one Service) since it started, beyond what the audit can see in the
// database. A fleet's figures are the sum over its shops.
type Events struct {
	// LateCommits counts orders the late-commit fault held back before
	// their commit (stock.Product.LateCommit).
	LateCommits int64
	// FencedOut counts holders the database refused because a newer
	// fencing token was registered first (strategy fenced).
	FencedOut int64
	// LocksLost counts holders that found their product lock lost before
	// they wrote (the watchdog gave up on it) and wrote nothing.
	LocksLost int64
	// GivenBack counts redis-decr reservations given back because the
	// order could not be written.
	GivenBack int64
	// Reclaimed counts redis-decr reservations this shop's sweep gave back
	// because their hold ran out with no order written (redisdecr/reclaim.go).
	Reclaimed int64
	// Batches counts the batches served (stock.Product.BatchMax), and
	// BatchedBuyers the buyers answered in them: their ratio is the mean
	// batch size.
	Batches, BatchedBuyers int64
	// QueueWritten counts the queued orders (redis-queue) this process's
	// consumer wrote, and QueueRefused those it dead-lettered.
	QueueWritten, QueueRefused int64
	// VersionMoved counts the sql-version tries that lost to another buyer's
	// write and were thrown away, work and all (version.go).
	VersionMoved int64
	// Paid, Expired and Cancelled count the orders this process paid,
	// expired (its sweep) and cancelled, and Returned the units the
	// expired and cancelled ones put back on sale (package life).
	Paid, Expired, Cancelled, Returned int64
	// Holds counts the holds of the product's lock (or hot row, without a
	// lock; Observer.Held), and Held is their total length.
	Holds int64
	Held  time.Duration
}

// counted lists the Events that happened counts, in the order of
// counters.n.
var counted = [...]Event{EventLateCommit, EventFencedOut, EventLockLost, EventGivenBack, EventReclaimed,
	EventWritten, EventRefused, EventVersionMoved, EventPaid, EventExpired, EventCancelled, EventReturned}

// counters is a product's Events as they are counted, and the number of
// its orders that reached their commit (the late-commit schedule).
type counters struct {
	n                [len(counted)]atomic.Int64 // one per counted Event
	commits          atomic.Int64
	batches, batched atomic.Int64
	holds, held      atomic.Int64
}

// of is how many times e happened.
func (c *counters) of(e Event) int64 { return c.n[slices.Index(counted[:], e)].Load() }

// events returns product's counters, creating them on first use.
func (s *Service) events(product string) *counters {
	if c, ok := s.counters.Load(product); ok {
		return c.(*counters)
	}
	c, _ := s.counters.LoadOrStore(product, new(counters))
	return c.(*counters)
}

// Events returns what this process counted for product: zeros for a
// product it has sold nothing of, or that does not exist (it does not
// look). Safe for concurrent use.
func (s *Service) Events(product string) Events {
	v, ok := s.counters.Load(product)
	if !ok {
		return Events{}
	}
	c := v.(*counters)
	return Events{
		LateCommits:   c.of(EventLateCommit),
		FencedOut:     c.of(EventFencedOut),
		LocksLost:     c.of(EventLockLost),
		GivenBack:     c.of(EventGivenBack),
		Reclaimed:     c.of(EventReclaimed),
		Batches:       c.batches.Load(),
		BatchedBuyers: c.batched.Load(),
		QueueWritten:  c.of(EventWritten),
		QueueRefused:  c.of(EventRefused),
		VersionMoved:  c.of(EventVersionMoved),
		Paid:          c.of(EventPaid),
		Expired:       c.of(EventExpired),
		Cancelled:     c.of(EventCancelled),
		Returned:      c.of(EventReturned),
		Holds:         c.holds.Load(),
		Held:          time.Duration(c.held.Load()),
	}
}
