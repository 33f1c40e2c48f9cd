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

	"github.com/flashsale/flashsale/internal/dlock"
)

// ErrShop is wrapped by errors from the shop's admin API: a refused
// product, a failed audit, a shop that does not answer.
var ErrShop = errors.New("scenario: shop")

// Audit is the shop's audit of one product, computed by the shop with SQL
// from its orders table (GET /api/v1/products/{id}/audit).
type Audit struct {
	ProductID       string `json:"product_id"`
	LockMode        string `json:"lock_mode"`
	InitialStock    int    `json:"initial_stock"`
	Stock           int    `json:"stock"`
	Orders          int    `json:"orders"`
	Sold            int    `json:"sold"`
	Oversold        int    `json:"oversold"`
	DuplicateOrders int    `json:"duplicate_orders"`
	Consistent      bool   `json:"consistent"`
}

// product is the body of POST /api/v1/products.
type product struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Stock     int     `json:"stock"`
	LockMode  string  `json:"lock_mode"`
	LockTTLMs int64   `json:"lock_ttl_ms"`
	WorkMs    int64   `json:"work_ms"`
	StallMs   int64   `json:"stall_ms"`
	StallRate float64 `json:"stall_rate"`
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

// createProduct creates the product a mode's attack sells.
func (a *shopAPI) createProduct(ctx context.Context, id string, mode dlock.Mode, s Settings) error {
	p := product{
		ID: id, Name: "双11 " + string(mode), Stock: s.Stock, LockMode: string(mode),
		LockTTLMs: s.LockTTL.Milliseconds(), WorkMs: s.Work.Milliseconds(),
		StallMs: s.Stall.Milliseconds(), StallRate: s.StallRate,
	}
	return a.do(ctx, http.MethodPost, "/api/v1/products", p, http.StatusCreated, nil)
}

// audit reads the shop's audit of product id.
func (a *shopAPI) audit(ctx context.Context, id string) (Audit, error) {
	var out Audit
	err := a.do(ctx, http.MethodGet, "/api/v1/products/"+id+"/audit", nil, http.StatusOK, &out)
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
