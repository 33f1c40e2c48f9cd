package ledger

// Audit is the shop's audit of one product, computed by the shop with SQL
// from its orders table (GET /api/v1/products/{id}/audit).
type Audit struct {
	ProductID       string `json:"product_id"`
	Strategy        string `json:"strategy"`
	InitialStock    int    `json:"initial_stock"`
	Stock           int    `json:"stock"`
	Orders          int    `json:"orders"`
	Sold            int    `json:"sold"`
	Oversold        int    `json:"oversold"`
	DuplicateOrders int    `json:"duplicate_orders"`
	Consistent      bool   `json:"consistent"`
	// RedisStock and Drift (Redis's stock less the database's) are there
	// for redis-decr only; RedisError says why they are missing if they
	// should be there.
	RedisStock *int   `json:"redis_stock,omitempty"`
	Drift      *int   `json:"drift,omitempty"`
	RedisError string `json:"redis_error,omitempty"`
	// QueueLength and QueuePending are a redis-queue product's backlog:
	// orders accepted and not yet written, and those a consumer holds.
	QueueLength  *int64 `json:"queue_length,omitempty"`
	QueuePending *int64 `json:"queue_pending,omitempty"`
	// Buckets are a product's stock buckets, each audited on its own
	// (sql-atomic with buckets only).
	Buckets []BucketAudit `json:"buckets,omitempty"`
	// Life is a pay-window product's units by where their orders stand;
	// nil for a product whose orders are final at once.
	Life *Life `json:"life,omitempty"`
}

// Life is the audit of a pay-window product's orders: per product,
// initial = stock + pending + paid. Resold counts units sold again after
// they came back; Undersold units neither sold nor back on sale.
type Life struct {
	Pending   int `json:"pending"`
	Paid      int `json:"paid"`
	Expired   int `json:"expired"`
	Cancelled int `json:"cancelled"`
	Placed    int `json:"placed"`
	Resold    int `json:"resold"`
	Undersold int `json:"undersold"`
}

// BucketAudit is one stock bucket's audit.
type BucketAudit struct {
	Bucket       int  `json:"bucket"`
	InitialStock int  `json:"initial_stock"`
	Stock        int  `json:"stock"`
	Orders       int  `json:"orders"`
	Sold         int  `json:"sold"`
	Consistent   bool `json:"consistent"`
}

// drained reports whether a's product has nothing left to write: no
// backlog (a product without a queue has none) and Redis answered.
func (a Audit) drained() bool {
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
	// Batches and BatchedBuyers: the batched modes' batches, and the buyers
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
