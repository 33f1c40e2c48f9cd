package tally

import "github.com/flashsale/flashsale/internal/httpapi"

// Audit is the shop's audit of one product, computed by the shop with SQL
// from its orders table: the shop's own record (httpapi.Audit), as read
// from GET /api/v1/products/{id}/audit.
type Audit = httpapi.Audit

// Life is the audit of a pay-window product's orders (httpapi.AuditLife).
type Life = httpapi.AuditLife

// drained reports whether a's product has nothing left to write: no
// backlog (a product without a queue has none) and Redis answered.
func drained(a Audit) bool {
	return a.RedisError == "" && (a.QueueLength == nil || *a.QueueLength == 0) &&
		(a.QueuePending == nil || *a.QueuePending == 0)
}

// Events is what the shops counted for a product beyond what its audit
// can see, summed over the fleet (GET /api/v1/products/{id}/events).
type Events struct {
	LateCommits int64 `json:"late_commits"`
	FencedOut   int64 `json:"fenced_out"`
	LocksLost   int64 `json:"locks_lost"`
	GivenBack   int64 `json:"given_back"`
	// Reclaimed: redis-decr reservations the shops' sweeps gave back, their
	// hold run out with no order written (a shop died, or was too slow).
	Reclaimed int64 `json:"reclaimed"`
	// QueueWritten and QueueRefused: the queued orders (redis-queue) the
	// shops' consumers wrote, and those they dead-lettered.
	QueueWritten int64 `json:"queue_written"`
	QueueRefused int64 `json:"queue_refused"`
	// Batches and BatchedBuyers: the batched strategies' batches, and the buyers
	// answered in them.
	Batches       int64 `json:"batches"`
	BatchedBuyers int64 `json:"batched_buyers"`
	// VersionMoved: sql-version tries the shops threw away, work and all,
	// because another buyer's write came first.
	VersionMoved int64 `json:"version_moved"`
	// Paid, Expired, Cancelled: orders of a pay-window product the shops
	// paid, expired (their sweeps) and cancelled; Returned the units the
	// expired and cancelled ones put back on sale.
	Paid      int64 `json:"paid,omitempty"`
	Expired   int64 `json:"expired,omitempty"`
	Cancelled int64 `json:"cancelled,omitempty"`
	Returned  int64 `json:"returned,omitempty"`
	// Holds and HeldUs: the holds of the product's lock, or of its hot
	// row where its strategy takes none, and their total length in
	// microseconds.
	Holds  int64 `json:"holds"`
	HeldUs int64 `json:"held_us"`
}

// Add adds o's counts to e.
func (e *Events) Add(o Events) {
	e.LateCommits += o.LateCommits
	e.FencedOut += o.FencedOut
	e.LocksLost += o.LocksLost
	e.GivenBack += o.GivenBack
	e.Reclaimed += o.Reclaimed
	e.QueueWritten += o.QueueWritten
	e.QueueRefused += o.QueueRefused
	e.Batches += o.Batches
	e.BatchedBuyers += o.BatchedBuyers
	e.Paid += o.Paid
	e.Expired += o.Expired
	e.Cancelled += o.Cancelled
	e.Returned += o.Returned
	e.VersionMoved += o.VersionMoved
	e.Holds += o.Holds
	e.HeldUs += o.HeldUs
}
