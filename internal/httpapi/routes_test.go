package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// keysOf decodes a JSON object and returns its sorted keys.
func keysOf(t *testing.T, body []byte) (map[string]any, []string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return m, keys
}

func wantKeys(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s keys = %v, want %v", what, got, want)
	}
}

// TestRoutes walks every route's success path and checks the JSON shapes,
// then the domain errors each route can answer.
func TestRoutes(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		h := newRouter(t, env, testToken)
		pid := env.Redis.Key("p")

		t.Run("create product", func(t *testing.T) {
			rec := do(t, h, request{method: "POST", path: "/api/v1/products", token: testToken, body: fmt.Sprintf(
				`{"id":%q,"name":"Phone","stock":2,"lock_mode":"redlock","lock_ttl_ms":3000,"work_ms":1,"stall_ms":0,"stall_rate":0}`, pid)})
			if rec.Code != http.StatusCreated {
				t.Fatalf("status = %d, want 201; body %s", rec.Code, rec.Body)
			}
			m, keys := keysOf(t, rec.Body.Bytes())
			wantKeys(t, "product", keys, "id", "name", "stock", "initial_stock", "strategy", "lock_mode", "lock_ttl_ms",
				"work_ms", "stall_ms", "stall_rate", "late_commit_ms", "late_commit_every", "batch_max", "created_at")
			if m["id"] != pid || m["stock"] != 2.0 || m["initial_stock"] != 2.0 || m["lock_mode"] != "redlock" || m["lock_ttl_ms"] != 3000.0 {
				t.Errorf("product = %v", m)
			}
			if _, err := time.Parse(time.RFC3339Nano, m["created_at"].(string)); err != nil {
				t.Errorf("created_at %v: %v", m["created_at"], err)
			}
			if got, want := rec.Header().Get("Location"), "/api/v1/products/"+pid; got != want {
				t.Errorf("Location = %q, want %q", got, want)
			}
		})

		t.Run("create product again", func(t *testing.T) {
			rec := do(t, h, request{method: "POST", path: "/api/v1/products", token: testToken,
				body: fmt.Sprintf(`{"id":%q,"stock":2,"lock_mode":"lua"}`, pid)})
			if rec.Code != http.StatusConflict || decodeError(t, rec).Error.Code != "already_exists" {
				t.Errorf("status %d body %s, want 409 already_exists", rec.Code, rec.Body)
			}
		})

		t.Run("defaults", func(t *testing.T) {
			id := env.Redis.Key("d")
			rec := do(t, h, request{method: "POST", path: "/api/v1/products", token: testToken,
				body: fmt.Sprintf(`{"id":%q,"stock":0,"lock_mode":"off"}`, id)})
			if rec.Code != http.StatusCreated {
				t.Fatalf("status = %d, want 201; body %s", rec.Code, rec.Body)
			}
			m, _ := keysOf(t, rec.Body.Bytes())
			if m["name"] != id || m["lock_ttl_ms"] != 5000.0 || m["stock"] != 0.0 {
				t.Errorf("product = %v, want name = id, lock_ttl_ms 5000, stock 0", m)
			}
		})

		t.Run("get product", func(t *testing.T) {
			rec := do(t, h, request{method: "GET", path: "/api/v1/products/" + pid})
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body)
			}
			m, keys := keysOf(t, rec.Body.Bytes())
			wantKeys(t, "product", keys, "id", "name", "stock", "initial_stock", "strategy", "lock_mode", "lock_ttl_ms",
				"work_ms", "stall_ms", "stall_rate", "late_commit_ms", "late_commit_every", "batch_max", "created_at")
			if m["name"] != "Phone" {
				t.Errorf("name = %v, want Phone", m["name"])
			}
		})

		t.Run("get unknown product", func(t *testing.T) {
			rec := do(t, h, request{method: "GET", path: "/api/v1/products/nope-" + pid})
			if rec.Code != http.StatusNotFound || decodeError(t, rec).Error.Code != "not_found" {
				t.Errorf("status %d body %s, want 404 not_found", rec.Code, rec.Body)
			}
		})

		t.Run("place order", func(t *testing.T) {
			rec := do(t, h, request{method: "POST", path: "/api/v1/orders",
				body: fmt.Sprintf(`{"user_id":"alice","product_id":%q,"quantity":2}`, pid)})
			if rec.Code != http.StatusCreated {
				t.Fatalf("status = %d, want 201; body %s", rec.Code, rec.Body)
			}
			m, keys := keysOf(t, rec.Body.Bytes())
			wantKeys(t, "order", keys, "id", "user_id", "product_id", "quantity", "strategy", "lock_mode", "created_at")
			if m["user_id"] != "alice" || m["product_id"] != pid || m["quantity"] != 2.0 || m["lock_mode"] != "redlock" || m["id"] == "" {
				t.Errorf("order = %v", m)
			}
		})

		orderErrors := []struct {
			name, body string
			wantStatus int
			wantCode   string
		}{
			{"duplicate order", fmt.Sprintf(`{"user_id":"alice","product_id":%q,"quantity":1}`, pid), 409, "duplicate_order"},
			{"sold out", fmt.Sprintf(`{"user_id":"bob","product_id":%q,"quantity":1}`, pid), 409, "sold_out"},
			{"unknown product", fmt.Sprintf(`{"user_id":"bob","product_id":"nope-%s","quantity":1}`, pid), 404, "not_found"},
		}
		for _, tt := range orderErrors {
			t.Run(tt.name, func(t *testing.T) {
				rec := do(t, h, request{method: "POST", path: "/api/v1/orders", body: tt.body})
				if rec.Code != tt.wantStatus {
					t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
				}
				if got := decodeError(t, rec).Error.Code; got != tt.wantCode {
					t.Errorf("code = %q, want %q", got, tt.wantCode)
				}
			})
		}

		t.Run("audit", func(t *testing.T) {
			rec := do(t, h, request{method: "GET", path: "/api/v1/products/" + pid + "/audit", token: testToken})
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body)
			}
			m, keys := keysOf(t, rec.Body.Bytes())
			wantKeys(t, "audit", keys, "product_id", "strategy", "lock_mode", "initial_stock", "stock", "orders", "sold",
				"oversold", "duplicate_orders", "consistent")
			want := map[string]any{"product_id": pid, "strategy": "redlock", "lock_mode": "redlock", "initial_stock": 2.0, "stock": 0.0,
				"orders": 1.0, "sold": 2.0, "oversold": 0.0, "duplicate_orders": 0.0, "consistent": true}
			for k, v := range want {
				if m[k] != v {
					t.Errorf("audit[%q] = %v, want %v", k, m[k], v)
				}
			}
		})

		t.Run("audit unknown product", func(t *testing.T) {
			rec := do(t, h, request{method: "GET", path: "/api/v1/products/nope-" + pid + "/audit", token: testToken})
			if rec.Code != http.StatusNotFound || decodeError(t, rec).Error.Code != "not_found" {
				t.Errorf("status %d body %s, want 404 not_found", rec.Code, rec.Body)
			}
		})

		t.Run("healthz", func(t *testing.T) {
			rec := do(t, h, request{method: "GET", path: "/healthz"})
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200", rec.Code)
			}
			if _, keys := keysOf(t, rec.Body.Bytes()); !slices.Contains(keys, "status") {
				t.Errorf("body %s has no status", rec.Body)
			}
		})

		t.Run("request id", func(t *testing.T) {
			req := newRequest("GET", "/healthz", "")
			req.Header.Set("X-Request-ID", "trace-123")
			if got := serve(h, req).Header().Get("X-Request-ID"); got != "trace-123" {
				t.Errorf("X-Request-ID = %q, want the caller's trace-123", got)
			}
			req = newRequest("GET", "/healthz", "")
			req.Header.Set("X-Request-ID", "bad id\nforged log line")
			if got := serve(h, req).Header().Get("X-Request-ID"); got == "" || got == req.Header.Get("X-Request-ID") {
				t.Errorf("X-Request-ID = %q, want a fresh id instead of an unsafe one", got)
			}
		})
	})
}
