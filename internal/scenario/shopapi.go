package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ErrShop is wrapped by errors from the shop's admin API: a refused
// product, a failed audit, a shop that does not answer.
var ErrShop = errors.New("scenario: shop")

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
}

func (e *Events) add(o Events) {
	e.LateCommits += o.LateCommits
	e.FencedOut += o.FencedOut
	e.LocksLost += o.LocksLost
	e.GivenBack += o.GivenBack
	e.Reclaimed += o.Reclaimed
	e.QueueWritten += o.QueueWritten
	e.QueueRefused += o.QueueRefused
	e.Batches += o.Batches
	e.BatchedBuyers += o.BatchedBuyers
}

// product is the body of POST /api/v1/products.
type product struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	Stock           int     `json:"stock"`
	Strategy        string  `json:"strategy"`
	LockTTLMs       int64   `json:"lock_ttl_ms"`
	WorkMs          int64   `json:"work_ms"`
	StallMs         int64   `json:"stall_ms"`
	StallRate       float64 `json:"stall_rate"`
	LateCommitMs    int64   `json:"late_commit_ms"`
	LateCommitEvery int     `json:"late_commit_every"`
	BatchMax        int     `json:"batch_max,omitempty"`
}

// shopAPI calls the admin routes of one shop. It is safe for concurrent use.
type shopAPI struct {
	base  string
	token string
	http  *http.Client
}

func newShopAPI(base, token string) *shopAPI {
	return &shopAPI{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}
}

// createProduct creates the product a strategy's attack sells.
func (a *shopAPI) createProduct(ctx context.Context, id string, mode Mode, s Settings) error {
	p := product{
		ID: id, Name: "双11 " + string(mode), Stock: s.Stock, Strategy: string(mode.Strategy()),
		LockTTLMs: s.LockTTL.Milliseconds(), WorkMs: s.Work.Milliseconds(),
		StallMs: s.Stall.Milliseconds(), StallRate: s.StallRate,
		LateCommitMs: s.LateCommit.Milliseconds(), LateCommitEvery: s.LateCommitEvery,
	}
	if mode.Batched() {
		p.BatchMax = s.Batch
	}
	return a.do(ctx, http.MethodPost, "/api/v1/products", p, http.StatusCreated, nil)
}

// audit reads the shop's audit of product id.
func (a *shopAPI) audit(ctx context.Context, id string) (Audit, error) {
	var out Audit
	err := a.do(ctx, http.MethodGet, "/api/v1/products/"+id+"/audit", nil, http.StatusOK, &out)
	return out, err
}

// orderStatus reads where order id stands (GET /api/v1/orders/{id}):
// "created", "queued", "refused", or "unknown" for a 404.
func (a *shopAPI) orderStatus(ctx context.Context, id string) (string, error) {
	var out struct {
		Status string `json:"status"`
	}
	err := a.do(ctx, http.MethodGet, "/api/v1/orders/"+id, nil, http.StatusOK, &out)
	if err != nil && strings.Contains(err.Error(), "404") {
		return "unknown", nil
	}
	return out.Status, err
}

// events reads what this shop counted for product id.
func (a *shopAPI) events(ctx context.Context, id string) (Events, error) {
	var out Events
	err := a.do(ctx, http.MethodGet, "/api/v1/products/"+id+"/events", nil, http.StatusOK, &out)
	return out, err
}

// do sends one admin request and decodes the answer into out.
func (a *shopAPI) do(ctx context.Context, method, path string, in any, want int, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrShop, method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrShop, method, a.base+path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != want {
		return fmt.Errorf("%w: %s %s: %s: %s", ErrShop, method, a.base+path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%w: %s %s: decoding %q: %v", ErrShop, method, path, b, err)
		}
	}
	return nil
}
