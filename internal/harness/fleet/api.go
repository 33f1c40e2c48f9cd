package fleet

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

	"github.com/flashsale/flashsale/internal/harness/tally"
)

// ErrShop is wrapped by errors from the shop's admin API: a refused
// product, a failed audit, a shop that does not answer.
var ErrShop = errors.New("fleet: shop")

// StatusError is the admin API's error when the shop answered with a
// status other than the one the call wants: Code is the answer's (401 for
// a wrong admin token, 404 for an unknown id). It unwraps to ErrShop;
// callers read Code with errors.As.
type StatusError struct {
	Method, URL string
	Code        int
	Status      string // "401 Unauthorized"
	Body        string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%v: %s %s: %s: %s", ErrShop, e.Method, e.URL, e.Status, e.Body)
}

func (e *StatusError) Unwrap() error { return ErrShop }

// Refused reports whether the shop refused the admin token (401 or 403):
// a wrong --admin-token, which no retry mends.
func (e *StatusError) Refused() bool {
	return e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden
}

// Product is the body of POST /api/v1/products: a product and the
// settings it sells under.
type Product struct {
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
	Buckets         int     `json:"buckets,omitempty"`
	PayWithinMs     int64   `json:"pay_within_ms,omitempty"`
}

// API calls the admin routes of one shop. It is safe for concurrent use.
type API struct {
	base  string
	token string
	http  *http.Client
}

// NewAPI returns the admin API of the shop at base, which accepts token.
func NewAPI(base, token string) *API {
	return &API{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}
}

// Every call returns an error that wraps ErrShop; one that the shop
// answered with an unwanted status is a *StatusError.

// CreateProduct creates p; an error wraps ErrShop.
func (a *API) CreateProduct(ctx context.Context, p Product) error {
	return a.do(ctx, http.MethodPost, "/api/v1/products", p, http.StatusCreated, nil)
}

// Audit reads the shop's audit of product id.
func (a *API) Audit(ctx context.Context, id string) (tally.Audit, error) {
	var out tally.Audit
	err := a.do(ctx, http.MethodGet, "/api/v1/products/"+id+"/audit", nil, http.StatusOK, &out)
	out.LockMode = "" // strategy's older name: the report keeps only strategy
	return out, err
}

// OrderStatus reads where order id stands (GET /api/v1/orders/{id}):
// "created", "queued", "refused", or "unknown" for a 404.
func (a *API) OrderStatus(ctx context.Context, id string) (string, error) {
	var out struct {
		Status string `json:"status"`
	}
	err := a.do(ctx, http.MethodGet, "/api/v1/orders/"+id, nil, http.StatusOK, &out)
	if se := (*StatusError)(nil); errors.As(err, &se) && se.Code == http.StatusNotFound {
		return "unknown", nil
	}
	return out.Status, err
}

// Events reads what this shop counted for product id.
func (a *API) Events(ctx context.Context, id string) (tally.Events, error) {
	var out tally.Events
	err := a.do(ctx, http.MethodGet, "/api/v1/products/"+id+"/events", nil, http.StatusOK, &out)
	return out, err
}

// do sends one admin request and decodes the answer into out.
func (a *API) do(ctx context.Context, method, path string, in any, want int, out any) error {
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
		return &StatusError{Method: method, URL: a.base + path, Code: resp.StatusCode, Status: resp.Status, Body: strings.TrimSpace(string(b))}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%w: %s %s: decoding %q: %v", ErrShop, method, path, b, err)
		}
	}
	return nil
}
