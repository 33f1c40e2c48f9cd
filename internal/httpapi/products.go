package httpapi

import (
	"math"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// createProductRequest is the body of POST /api/v1/products. Required fields
// are pointers so a missing one is told apart from a zero; the optional
// settings default in package stock (name: the id, lock_ttl_ms: 5000,
// work, stall, stall_rate and late_commit_ms: 0, late_commit_every: 10
// when late_commit_ms is set, batch_max: 0, buckets: 0, pay_within_ms: 0). The strategy is "strategy", or under its
// older name "lock_mode", which clients written before the lock-free
// strategies send: either one, or both if they agree.
type createProductRequest struct {
	ID              *string  `json:"id"`
	Name            *string  `json:"name"`
	Stock           *int     `json:"stock"`
	Strategy        *string  `json:"strategy"`
	LockMode        *string  `json:"lock_mode"`
	LockTTLMs       *int     `json:"lock_ttl_ms"`
	WorkMs          *int     `json:"work_ms"`
	StallMs         *int     `json:"stall_ms"`
	StallRate       *float64 `json:"stall_rate"`
	LateCommitMs    *int     `json:"late_commit_ms"`
	LateCommitEvery *int     `json:"late_commit_every"`
	BatchMax        *int     `json:"batch_max"`
	Buckets         *int     `json:"buckets"`
	PayWithinMs     *int     `json:"pay_within_ms"`
}

// strategy returns the strategy the body names, under either name.
func (r *createProductRequest) strategy() (string, error) {
	switch {
	case r.Strategy == nil && r.LockMode == nil:
		return "", invalid("strategy", "required")
	case r.Strategy == nil:
		return *r.LockMode, nil
	case r.LockMode != nil && *r.LockMode != *r.Strategy:
		return "", invalid("lock_mode", "is the older name of strategy and must agree with it, got %q and %q",
			*r.LockMode, *r.Strategy)
	}
	return *r.Strategy, nil
}

// product checks that every required field is present and converts the
// request to a stock.Product. The values themselves (id charset, stock
// range, TTL limits, strategy names) are stock.Store.Create's to judge.
func (r *createProductRequest) product() (stock.Product, error) {
	if err := required("id", r.ID); err != nil {
		return stock.Product{}, err
	}
	if err := required("stock", r.Stock); err != nil {
		return stock.Product{}, err
	}
	name, err := r.strategy()
	if err != nil {
		return stock.Product{}, err
	}
	p := stock.Product{
		ID:              *r.ID,
		Name:            deref(r.Name),
		Stock:           *r.Stock,
		Strategy:        strategy.Name(name),
		StallRate:       deref(r.StallRate),
		LateCommitEvery: deref(r.LateCommitEvery),
		BatchMax:        deref(r.BatchMax),
		Buckets:         deref(r.Buckets),
	}
	for _, f := range []struct {
		name string
		ms   *int
		dst  *time.Duration
	}{
		{"lock_ttl_ms", r.LockTTLMs, &p.LockTTL},
		{"work_ms", r.WorkMs, &p.Work},
		{"stall_ms", r.StallMs, &p.Stall},
		{"late_commit_ms", r.LateCommitMs, &p.LateCommit},
		{"pay_within_ms", r.PayWithinMs, &p.PayWithin},
	} {
		if f.ms == nil {
			continue
		}
		d, err := millis(f.name, *f.ms)
		if err != nil {
			return stock.Product{}, err
		}
		*f.dst = d
	}
	return p, nil
}

// maxMillis is the most milliseconds a time.Duration holds (about 292
// years).
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// millis converts a *_ms field to a time.Duration. A number beyond what a
// Duration holds is refused here, as encoding/json refuses a number beyond
// what an int holds: it would overflow into some other, plausible value.
// Every number that converts is package stock's to judge.
func millis(field string, ms int) (time.Duration, error) {
	if int64(ms) > maxMillis || int64(ms) < -maxMillis {
		return 0, invalid(field, "%d milliseconds do not fit in a duration", ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// productJSON is a product on the wire. lock_mode repeats strategy for
// clients written before the lock-free strategies.
type productJSON struct {
	ID              string    `json:"id"`
	Name            string    `json:"name"`
	Stock           int       `json:"stock"`
	InitialStock    int       `json:"initial_stock"`
	Strategy        string    `json:"strategy"`
	LockMode        string    `json:"lock_mode"`
	LockTTLMs       int64     `json:"lock_ttl_ms"`
	WorkMs          int64     `json:"work_ms"`
	StallMs         int64     `json:"stall_ms"`
	StallRate       float64   `json:"stall_rate"`
	LateCommitMs    int64     `json:"late_commit_ms"`
	LateCommitEvery int       `json:"late_commit_every"`
	BatchMax        int       `json:"batch_max"`
	Buckets         int       `json:"buckets,omitempty"`
	PayWithinMs     int64     `json:"pay_within_ms,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
}

func toProductJSON(p stock.Product) productJSON {
	return productJSON{
		ID:              p.ID,
		Name:            p.Name,
		Stock:           p.Stock,
		InitialStock:    p.InitialStock,
		Strategy:        string(p.Strategy),
		LockMode:        string(p.Strategy),
		LockTTLMs:       p.LockTTL.Milliseconds(),
		WorkMs:          p.Work.Milliseconds(),
		StallMs:         p.Stall.Milliseconds(),
		StallRate:       p.StallRate,
		LateCommitMs:    p.LateCommit.Milliseconds(),
		LateCommitEvery: p.LateCommitEvery,
		BatchMax:        p.BatchMax,
		Buckets:         p.Buckets,
		PayWithinMs:     p.PayWithin.Milliseconds(),
		CreatedAt:       p.CreatedAt.UTC(),
	}
}

// createProduct handles POST /api/v1/products (admin): 201 with the product.
func (a *api) createProduct(c *gin.Context) {
	var req createProductRequest
	if err := decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	p, err := req.product()
	if err != nil {
		writeError(c, err)
		return
	}
	created, err := a.orders.AddProduct(c.Request.Context(), p)
	if err != nil {
		writeError(c, err)
		return
	}
	c.Header("Location", "/api/v1/products/"+created.ID)
	c.PureJSON(http.StatusCreated, toProductJSON(created))
}

// getProduct handles GET /api/v1/products/:id: 200 with the product. Get
// checks the id.
func (a *api) getProduct(c *gin.Context) {
	p, err := a.products.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		writeError(c, err)
		return
	}
	c.PureJSON(http.StatusOK, toProductJSON(p))
}

// eventsJSON is what one shop process counted for a product.
type eventsJSON struct {
	ProductID   string `json:"product_id"`
	LateCommits int64  `json:"late_commits"`
	FencedOut   int64  `json:"fenced_out"`
	LocksLost   int64  `json:"locks_lost"`
	GivenBack   int64  `json:"given_back"`
	Reclaimed   int64  `json:"reclaimed"`
	Batches     int64  `json:"batches"`
	Batched     int64  `json:"batched_buyers"`
	// QueueWritten and QueueRefused: queued orders (redis-queue) this
	// shop's consumer wrote, and dead-lettered.
	QueueWritten int64 `json:"queue_written"`
	QueueRefused int64 `json:"queue_refused"`
	// VersionMoved: sql-version tries thrown away, work and all, because
	// another buyer's write came first.
	VersionMoved int64 `json:"version_moved"`
	// Paid, Expired, Cancelled: orders of a product with a pay window
	// this shop paid, expired (its sweep) and cancelled; Returned: the
	// units the expired and cancelled ones put back on sale.
	Paid      int64 `json:"paid,omitempty"`
	Expired   int64 `json:"expired,omitempty"`
	Cancelled int64 `json:"cancelled,omitempty"`
	Returned  int64 `json:"returned,omitempty"`
	// Holds: the holds of the product's lock, or of its hot row where
	// its strategy takes none; HeldUs their total length in
	// microseconds.
	Holds  int64 `json:"holds"`
	HeldUs int64 `json:"held_us"`
}

// productEvents handles GET /api/v1/products/:id/events (admin): 200 with
// what this shop process counted for the product (order.Events). Unlike
// the audit it is per process: a fleet's figures are the sum over its
// shops.
func (a *api) productEvents(c *gin.Context) {
	p, err := a.products.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		writeError(c, err)
		return
	}
	e := a.orders.Events(p.ID)
	c.PureJSON(http.StatusOK, eventsJSON{
		ProductID: p.ID, LateCommits: e.LateCommits, FencedOut: e.FencedOut,
		LocksLost: e.LocksLost, GivenBack: e.GivenBack, Reclaimed: e.Reclaimed,
		Batches: e.Batches, Batched: e.BatchedBuyers,
		QueueWritten: e.QueueWritten, QueueRefused: e.QueueRefused,
		VersionMoved: e.VersionMoved,
		Paid:         e.Paid, Expired: e.Expired, Cancelled: e.Cancelled, Returned: e.Returned,
		Holds: e.Holds, HeldUs: e.Held.Microseconds(),
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
