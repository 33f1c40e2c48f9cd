package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/buyertoken"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestOrderOwner: with a buyer secret, paying and cancelling an order is
// its buyer's alone. Another buyer's token is 403, a forged or expired
// one 401, and the order and the stock stay as they were; the buyer's own
// token pays or cancels.
func TestOrderOwner(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		db := env.DB.DB()
		products := stock.NewStore(db)
		orders := order.NewService(db, products, nil, order.Options{Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(func() { orders.Close() })
		h := httpapi.NewRouter(httpapi.Deps{Products: products, Orders: orders, Statuses: orders, DB: db,
			AdminToken: testToken, BuyerSecret: string(buyerSecret), Logger: slog.New(slog.DiscardHandler)})
		p := env.Redis.Key("owner")
		createProduct(t, h, `{"id":"`+p+`","stock":3,"strategy":"sql-atomic","pay_within_ms":60000}`)
		later := time.Now().Add(time.Hour)
		as := func(buyer string) string { return buyertoken.Sign(buyerSecret, buyer, later) }
		call := func(method, path, body, token string) (int, map[string]any) {
			t.Helper()
			req := newRequest(method, path, body)
			if token != "" {
				req.Header.Set(httpapi.BuyerTokenHeader, token)
			}
			rec := serve(h, req)
			var m map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			return rec.Code, m
		}
		c, m := call("POST", "/api/v1/orders", `{"user_id":"alice","product_id":"`+p+`","quantity":1}`, as("alice"))
		if c != http.StatusCreated {
			t.Fatalf("alice places: %d %v", c, m)
		}
		id := m["id"].(string)
		unchanged := func(t *testing.T) {
			t.Helper()
			if c, m := call("GET", "/api/v1/orders/"+id, "", ""); c != 200 || m["state"] != "pending" {
				t.Errorf("the order after a refusal: %d %v; want pending", c, m)
			}
			if c, m := call("GET", "/api/v1/products/"+p, "", ""); c != 200 || m["stock"] != float64(2) {
				t.Errorf("the product after a refusal: %d %v; want stock 2", c, m)
			}
		}

		refusals := []struct {
			name, token string
			status      int
		}{
			{"no token", "", http.StatusUnauthorized},
			{"forged", buyertoken.Sign([]byte("another secret, sixteen+"), "alice", later), http.StatusUnauthorized},
			{"expired", buyertoken.Sign(buyerSecret, "alice", time.Now().Add(-time.Second)), http.StatusUnauthorized},
			{"another buyer's", as("mallory"), http.StatusForbidden},
			{"another case of the id", as("Alice"), http.StatusForbidden},
		}
		for _, action := range []string{"pay", "cancel"} {
			for _, r := range refusals {
				t.Run(action+" with "+r.name+" token", func(t *testing.T) {
					if c, m := call("POST", "/api/v1/orders/"+id+"/"+action, "", r.token); c != r.status {
						t.Errorf("got %d %v, want %d", c, m, r.status)
					}
					unchanged(t)
				})
			}
		}
		t.Run("another buyer's token on an unknown order", func(t *testing.T) {
			if c, _ := call("POST", "/api/v1/orders/no-such-order/pay", "", as("mallory")); c != http.StatusNotFound {
				t.Errorf("got %d, want 404", c)
			}
		})
		t.Run("own token pays", func(t *testing.T) {
			if c, m := call("POST", "/api/v1/orders/"+id+"/pay", "", as("alice")); c != 200 || m["state"] != "paid" {
				t.Errorf("got %d %v, want 200 paid", c, m)
			}
		})
		t.Run("own token cancels", func(t *testing.T) {
			c, m := call("POST", "/api/v1/orders", `{"user_id":"bob","product_id":"`+p+`","quantity":1}`, as("bob"))
			if c != http.StatusCreated {
				t.Fatalf("bob places: %d %v", c, m)
			}
			if c, m := call("POST", "/api/v1/orders/"+m["id"].(string)+"/cancel", "", as("bob")); c != 200 || m["state"] != "cancelled" {
				t.Errorf("got %d %v, want 200 cancelled", c, m)
			}
		})
	})
}
