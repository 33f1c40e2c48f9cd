package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestOrderLifeRoutes: an order of a product with a pay window is shown
// pending with its deadline, paid (twice, the same answer), and refused
// what its state forbids, with the error table's codes.
func TestOrderLifeRoutes(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		db := env.DB.DB()
		products := stock.NewStore(db)
		orders := order.NewService(db, products, nil, order.Options{Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(func() { orders.Close() })
		h := httpapi.NewRouter(httpapi.Deps{Products: products, Orders: orders, Statuses: orders, DB: db,
			AdminToken: testToken, Logger: slog.New(slog.DiscardHandler)})
		p := env.Redis.Key("pay-http")
		createProduct(t, h, `{"id":"`+p+`","stock":3,"strategy":"sql-atomic","pay_within_ms":60000}`)
		call := func(method, path, body string) (int, map[string]any) {
			t.Helper()
			rec := do(t, h, request{method: method, path: path, body: body})
			var m map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			return rec.Code, m
		}
		place := func(u string) string {
			t.Helper()
			c, m := call("POST", "/api/v1/orders", `{"user_id":"`+u+`","product_id":"`+p+`","quantity":1}`)
			if c != http.StatusCreated {
				t.Fatalf("place for %s: %d %v", u, c, m)
			}
			return m["id"].(string)
		}
		code := func(m map[string]any) any {
			if e, ok := m["error"].(map[string]any); ok {
				return e["code"]
			}
			return nil
		}

		paid := place("alice")
		if c, m := call("GET", "/api/v1/orders/"+paid, ""); c != 200 || m["state"] != "pending" || m["deadline"] == nil {
			t.Errorf("GET a new order: %d %v; want state pending and a deadline", c, m)
		}
		for i := range 2 {
			if c, m := call("POST", "/api/v1/orders/"+paid+"/pay", ""); c != 200 || m["state"] != "paid" || m["deadline"] != nil {
				t.Errorf("pay #%d: %d %v; want 200, paid, no deadline", i+1, c, m)
			}
		}
		if c, m := call("POST", "/api/v1/orders/"+paid+"/cancel", ""); c != 409 || code(m) != "already_paid" {
			t.Errorf("cancel a paid order: %d %v; want 409 already_paid", c, m)
		}

		gone := place("bob")
		if c, m := call("POST", "/api/v1/orders/"+gone+"/cancel", ""); c != 200 || m["state"] != "cancelled" {
			t.Errorf("cancel: %d %v; want 200 cancelled", c, m)
		}
		if c, m := call("POST", "/api/v1/orders/"+gone+"/pay", ""); c != 409 || code(m) != "cancelled" {
			t.Errorf("pay a cancelled order: %d %v; want 409 cancelled", c, m)
		}
		if c, m := call("GET", "/api/v1/products/"+p, ""); c != 200 || m["stock"] != float64(2) || m["pay_within_ms"] != float64(60000) {
			t.Errorf("the product: %d %v; want stock 2 (bob's unit back), pay_within_ms 60000", c, m)
		}
		if c, _ := call("POST", "/api/v1/orders/"+uuid.NewString()+"/pay", ""); c != 404 {
			t.Errorf("pay an unknown order: %d, want 404", c)
		}
		if c, _ := call("POST", "/api/v1/orders/bad!/cancel", ""); c != 400 {
			t.Errorf("cancel a malformed id: %d, want 400", c)
		}
		body := `{"id":"` + p + `-neg","stock":3,"strategy":"sql-atomic","pay_within_ms":-1}`
		if rec := do(t, h, request{method: "POST", path: "/api/v1/products", body: body, token: testToken}); rec.Code != http.StatusBadRequest {
			t.Errorf("create %s: %d, want 400", body, rec.Code)
		}
	})
}
