package fleet

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/tally"
)

// The admin API sends the token, decodes the shop's answers, reads a 404
// order as "unknown", and wraps every other failure in ErrShop.
func TestAPI(t *testing.T) {
	var created Product
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, `{"error":{"code":"unauthorized"}}`, http.StatusUnauthorized)
			return
		}
		switch r.Method + " " + r.URL.Path {
		case "POST /api/v1/products":
			json.NewDecoder(r.Body).Decode(&created)
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{}`))
		case "GET /api/v1/products/p1/audit":
			w.Write([]byte(`{"product_id":"p1","initial_stock":100,"stock":0,"sold":101,"oversold":1,"consistent":true}`))
		case "GET /api/v1/products/p1/events":
			w.Write([]byte(`{"fenced_out":3,"late_commits":2}`))
		case "GET /api/v1/orders/o1":
			w.Write([]byte(`{"status":"created"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer shop.Close()
	api := NewAPI(shop.URL+"/", "tok")
	ctx := t.Context()

	if err := api.CreateProduct(ctx, Product{ID: "p1", Stock: 100, Strategy: "fenced", LockTTLMs: 100}); err != nil {
		t.Fatalf("CreateProduct: %v", err)
	}
	if created.ID != "p1" || created.Stock != 100 || created.Strategy != "fenced" || created.LockTTLMs != 100 {
		t.Errorf("the shop got %+v, want p1, 100 units, fenced, 100ms", created)
	}
	au, err := api.Audit(ctx, "p1")
	if err != nil || au.Sold != 101 || au.Oversold != 1 || au.InitialStock != 100 {
		t.Errorf("Audit = %+v, %v; want 101 sold of 100, oversold 1", au, err)
	}
	ev, err := api.Events(ctx, "p1")
	if err != nil || ev != (tally.Events{FencedOut: 3, LateCommits: 2}) {
		t.Errorf("Events = %+v, %v; want 3 fenced out, 2 late commits", ev, err)
	}
	for id, want := range map[string]string{"o1": "created", "o2": "unknown"} {
		if got, err := api.OrderStatus(ctx, id); err != nil || got != want {
			t.Errorf("OrderStatus(%s) = %q, %v; want %q", id, got, err, want)
		}
	}
	_, err = NewAPI(shop.URL, "wrong").Audit(ctx, "p1")
	var se *StatusError
	if !errors.Is(err, ErrShop) || !errors.As(err, &se) || se.Code != http.StatusUnauthorized || !se.Refused() {
		t.Errorf("Audit with a wrong token: %v, want ErrShop, a *StatusError with code 401 that says the token was refused", err)
	}
	if _, err := api.Audit(ctx, "p2"); !errors.As(err, &se) || se.Code != http.StatusNotFound || se.Refused() {
		t.Errorf("Audit of an unknown product: %v, want a *StatusError with code 404, not a refused token", err)
	}
}

// Every way a shop's admin route can fail is ErrShop, saying which route
// and what came back; an order lookup that is not a 404 is an error.
func TestAPIFailures(t *testing.T) {
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/products":
			http.Error(w, `{"error":{"code":"already_exists"}}`, http.StatusConflict)
		case "/api/v1/products/p1/audit":
			w.Write([]byte(`{"sold": "many"}`))
		default:
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	defer shop.Close()
	api := NewAPI(shop.URL, "tok")
	ctx := t.Context()
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"refused product": {api.CreateProduct(ctx, Product{ID: "p1"}), "POST " + shop.URL + "/api/v1/products: 409 Conflict: {\"error\":{\"code\":\"already_exists\"}}"},
		"undecodable":     {second(api.Audit(ctx, "p1")), `decoding "{\"sold\": \"many\"}"`},
		"order lookup":    {second(api.OrderStatus(ctx, "o1")), "503 Service Unavailable: down"},
		"events":          {second(api.Events(ctx, "p1")), "503"},
		"no shop":         {second(NewAPI("http://127.0.0.1:1", "tok").Audit(ctx, "p1")), "connection refused"},
		"bad request":     {second(NewAPI("http://bad host", "tok").Audit(ctx, "p1")), "GET /api/v1/products/p1/audit"},
	} {
		if !errors.Is(tc.err, ErrShop) || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrShop saying %q", name, tc.err, tc.want)
		}
	}
}

// second is a call's error, its value dropped.
func second[T any](_ T, err error) error { return err }
