package scenario

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// fakeShop is a tiny, correct test double of the shop's HTTP contract
// (create product, place order, audit, events), for testing the targeter, the
// tally and the run's plumbing without the real shop. The scenario's real
// tests (scenario_test.go) run the real shop.
type fakeShop struct {
	mu       sync.Mutex
	token    string
	products map[string]*fakeProduct
}

type fakeProduct struct {
	fleet.Product
	left   int
	buyers map[string]bool
}

func newFakeShop(t *testing.T, token string) *httptest.Server {
	f := &fakeShop{token: token, products: map[string]*fakeProduct{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeShop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	admin := r.Header.Get("Authorization") == "Bearer "+f.token
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/products":
		if !admin {
			fakeError(w, 401, "unauthorized")
			return
		}
		var p fleet.Product
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			fakeError(w, 400, "invalid_argument")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.products[p.ID] != nil {
			fakeError(w, 409, "already_exists")
			return
		}
		f.products[p.ID] = &fakeProduct{Product: p, left: p.Stock, buyers: map[string]bool{}}
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(p)
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/orders":
		var o struct {
			UserID    string `json:"user_id"`
			ProductID string `json:"product_id"`
			Quantity  int    `json:"quantity"`
		}
		if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
			fakeError(w, 400, "invalid_argument")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		p := f.products[o.ProductID]
		switch {
		case p == nil:
			fakeError(w, 404, "not_found")
		case p.buyers[o.UserID]:
			fakeError(w, 409, "duplicate_order")
		case p.left < o.Quantity:
			fakeError(w, 409, "sold_out")
		default:
			p.left -= o.Quantity
			p.buyers[o.UserID] = true
			w.WriteHeader(201)
			json.NewEncoder(w).Encode(o)
		}
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/audit"):
		if !admin {
			fakeError(w, 401, "unauthorized")
			return
		}
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/products/"), "/audit")
		f.mu.Lock()
		defer f.mu.Unlock()
		p := f.products[id]
		if p == nil {
			fakeError(w, 404, "not_found")
			return
		}
		sold := p.Stock - p.left
		json.NewEncoder(w).Encode(tally.Audit{
			ProductID: id, Strategy: p.Strategy, InitialStock: p.Stock, Stock: p.left,
			Orders: len(p.buyers), Sold: sold, Consistent: true,
		})
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/events"):
		if !admin {
			fakeError(w, 401, "unauthorized")
			return
		}
		json.NewEncoder(w).Encode(tally.Events{}) // a correct shop without faults counts none
	default:
		fakeError(w, 404, "not_found")
	}
}

func fakeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": code}})
}
