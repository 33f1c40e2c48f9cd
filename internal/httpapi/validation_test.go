package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
)

// TestBadInput sends every kind of bad request: bad encoding (httpapi's to
// refuse) and bad values (order's and stock's), and checks the status, the
// error code, that the message names the field, and that nothing reached
// the database.
func TestBadInput(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		h := newRouter(t, env, testToken)
		pid := env.Redis.Key("p")
		createProduct(t, h, fmt.Sprintf(`{"id":%q,"stock":10,"lock_mode":"lua"}`, pid))

		orderBody := func(fields string) string {
			return fmt.Sprintf(`{"user_id":"u1","product_id":%q,%s}`, pid, fields)
		}
		big := orderBody(`"quantity":1,"pad":"` + strings.Repeat("x", 17<<10) + `"`)
		tests := []struct {
			name        string
			path        string
			body        string
			contentType *string
			wantStatus  int
			wantCode    string
			wantInMsg   string
		}{
			{"malformed JSON", "/api/v1/orders", `{"user_id":"u1",`, nil, 400, "invalid_argument", "malformed JSON"},
			{"not JSON", "/api/v1/orders", `user_id=u1`, nil, 400, "invalid_argument", "malformed JSON"},
			{"empty body", "/api/v1/orders", ``, ptr("application/json"), 400, "invalid_argument", "empty"},
			{"array body", "/api/v1/orders", `[1,2]`, nil, 400, "invalid_argument", "JSON object"},
			{"two objects", "/api/v1/orders", orderBody(`"quantity":1`) + `{}`, nil, 400, "invalid_argument", "one JSON object"},
			{"unknown field", "/api/v1/orders", orderBody(`"quantity":1,"coupon":"x"`), nil, 400, "invalid_argument", "coupon"},
			{"quantity as string", "/api/v1/orders", orderBody(`"quantity":"1"`), nil, 400, "invalid_argument", "quantity"},
			{"quantity fractional", "/api/v1/orders", orderBody(`"quantity":1.5`), nil, 400, "invalid_argument", "quantity"},
			{"user_id as number", "/api/v1/orders", fmt.Sprintf(`{"user_id":7,"product_id":%q,"quantity":1}`, pid), nil, 400, "invalid_argument", "user_id"},
			{"missing quantity", "/api/v1/orders", fmt.Sprintf(`{"user_id":"u1","product_id":%q}`, pid), nil, 400, "invalid_argument", "quantity"},
			{"null quantity", "/api/v1/orders", orderBody(`"quantity":null`), nil, 400, "invalid_argument", "quantity"},
			{"missing user_id", "/api/v1/orders", fmt.Sprintf(`{"product_id":%q,"quantity":1}`, pid), nil, 400, "invalid_argument", "user_id"},
			{"missing product_id", "/api/v1/orders", `{"user_id":"u1","quantity":1}`, nil, 400, "invalid_argument", "product_id"},
			{"quantity 0", "/api/v1/orders", orderBody(`"quantity":0`), nil, 400, "invalid_argument", "quantity"},
			{"quantity 6", "/api/v1/orders", orderBody(`"quantity":6`), nil, 400, "invalid_argument", "quantity"},
			{"quantity negative", "/api/v1/orders", orderBody(`"quantity":-1`), nil, 400, "invalid_argument", "quantity"},
			{"empty user_id", "/api/v1/orders", fmt.Sprintf(`{"user_id":"","product_id":%q,"quantity":1}`, pid), nil, 400, "invalid_argument", "user_id"},
			{"user_id 65 chars", "/api/v1/orders", fmt.Sprintf(`{"user_id":%q,"product_id":%q,"quantity":1}`, strings.Repeat("u", 65), pid), nil, 400, "invalid_argument", "user_id"},
			{"user_id with space", "/api/v1/orders", fmt.Sprintf(`{"user_id":"a b","product_id":%q,"quantity":1}`, pid), nil, 400, "invalid_argument", "user_id"},
			{"user_id with brace", "/api/v1/orders", fmt.Sprintf(`{"user_id":"a}b","product_id":%q,"quantity":1}`, pid), nil, 400, "invalid_argument", "user_id"},
			{"product_id non-ASCII", "/api/v1/orders", `{"user_id":"u1","product_id":"café","quantity":1}`, nil, 400, "invalid_argument", "product_id"},
			{"body over 16 KiB", "/api/v1/orders", big, nil, 400, "invalid_argument", "larger than"},
			{"text/plain", "/api/v1/orders", orderBody(`"quantity":1`), ptr("text/plain"), 400, "invalid_argument", "Content-Type"},
			{"form content type", "/api/v1/orders", orderBody(`"quantity":1`), ptr("application/x-www-form-urlencoded"), 400, "invalid_argument", "Content-Type"},
			{"no content type", "/api/v1/orders", orderBody(`"quantity":1`), ptr(""), 400, "invalid_argument", "Content-Type"},
			{"product: missing id", "/api/v1/products", `{"stock":1,"lock_mode":"lua"}`, nil, 400, "invalid_argument", "id"},
			{"product: missing stock", "/api/v1/products", `{"id":"p2","lock_mode":"lua"}`, nil, 400, "invalid_argument", "stock"},
			{"product: missing strategy", "/api/v1/products", `{"id":"p2","stock":1}`, nil, 400, "invalid_argument", "strategy"},
			{"product: unknown strategy", "/api/v1/products", `{"id":"p2","stock":1,"strategy":"fast"}`, nil, 400, "invalid_argument", "strategy"},
			{"product: unknown strategy by its older name", "/api/v1/products", `{"id":"p2","stock":1,"lock_mode":"fast"}`, nil, 400, "invalid_argument", "strategy"},
			{"product: strategy and lock_mode disagree", "/api/v1/products", `{"id":"p2","stock":1,"strategy":"lua","lock_mode":"off"}`, nil, 400, "invalid_argument", "lock_mode"},
			{"product: late_commit_ms negative", "/api/v1/products", `{"id":"p2","stock":1,"strategy":"lua","late_commit_ms":-1}`, nil, 400, "invalid_argument", "late_commit_ms"},
			{"product: negative stock", "/api/v1/products", `{"id":"p2","stock":-1,"lock_mode":"lua"}`, nil, 400, "invalid_argument", "stock"},
			{"product: stock as string", "/api/v1/products", `{"id":"p2","stock":"10","lock_mode":"lua"}`, nil, 400, "invalid_argument", "stock"},
			{"product: bad id", "/api/v1/products", `{"id":"p/2","stock":1,"lock_mode":"lua"}`, nil, 400, "invalid_argument", "id"},
			{"product: ttl too short", "/api/v1/products", `{"id":"p2","stock":1,"lock_mode":"lua","lock_ttl_ms":1}`, nil, 400, "invalid_argument", "lock_ttl_ms"},
			{"product: huge work_ms", "/api/v1/products", `{"id":"p2","stock":1,"lock_mode":"lua","work_ms":99999999999999}`, nil, 400, "invalid_argument", "work_ms"},
			{"product: stall_rate above 1", "/api/v1/products", `{"id":"p2","stock":1,"lock_mode":"lua","stall_rate":2}`, nil, 400, "invalid_argument", "stall_rate"},
			{"product: unknown field", "/api/v1/products", `{"id":"p2","stock":1,"lock_mode":"lua","price":3}`, nil, 400, "invalid_argument", "price"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := do(t, h, request{method: "POST", path: tt.path, body: tt.body, contentType: tt.contentType, token: testToken})
				if rec.Code != tt.wantStatus {
					t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
				}
				e := decodeError(t, rec)
				t.Logf("%d %s: %s", rec.Code, e.Error.Code, e.Error.Message)
				if e.Error.Code != tt.wantCode {
					t.Errorf("code = %q, want %q", e.Error.Code, tt.wantCode)
				}
				if !strings.Contains(e.Error.Message, tt.wantInMsg) {
					t.Errorf("message = %q, want it to mention %q", e.Error.Message, tt.wantInMsg)
				}
			})
		}

		t.Run("order fields in the order package's words", func(t *testing.T) {
			for _, req := range []order.Request{
				{UserID: "a b", ProductID: pid, Quantity: 1},
				{UserID: "u1", ProductID: "", Quantity: 1},
				{UserID: "u1", ProductID: pid, Quantity: order.MaxQuantity + 1},
			} {
				body := fmt.Sprintf(`{"user_id":%q,"product_id":%q,"quantity":%d}`, req.UserID, req.ProductID, req.Quantity)
				rec := do(t, h, request{method: "POST", path: "/api/v1/orders", body: body})
				want := req.Validate()
				if want == nil {
					t.Fatalf("Validate(%+v) = nil, want an error", req)
				}
				if got := decodeError(t, rec).Error.Message; got != want.Error() {
					t.Errorf("POST %s: message = %q, want %q", body, got, want.Error())
				}
			}
		})

		t.Run("bad ids in the path", func(t *testing.T) {
			for _, path := range []string{
				"/api/v1/products/" + strings.Repeat("p", 65),
				"/api/v1/products/a%20b",
				"/api/v1/products/caf%C3%A9/audit",
			} {
				rec := do(t, h, request{method: "GET", path: path, token: testToken})
				if rec.Code != http.StatusBadRequest {
					t.Errorf("GET %s: status = %d, want 400; body %s", path, rec.Code, rec.Body)
					continue
				}
				if e := decodeError(t, rec); e.Error.Code != "invalid_argument" || !strings.Contains(e.Error.Message, "id") {
					t.Errorf("GET %s: error = %+v, want invalid_argument naming id", path, e.Error)
				}
			}
		})

		t.Run("nothing reached the database", func(t *testing.T) {
			var orders, products int64
			db := env.DB.DB()
			if err := db.Table("orders").Count(&orders).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Table("products").Count(&products).Error; err != nil {
				t.Fatal(err)
			}
			if orders != 0 || products != 1 {
				t.Errorf("orders, products = %d, %d; want 0, 1", orders, products)
			}
		})
	})
}

// TestUnknownRoutes checks that routing errors use the same JSON errors.
func TestUnknownRoutes(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		h := newRouter(t, env, testToken)
		for _, tt := range []struct {
			method, path string
			wantStatus   int
			wantCode     string
		}{
			{"GET", "/api/v1/nope", 404, "not_found"},
			{"DELETE", "/api/v1/orders", 405, "method_not_allowed"},
		} {
			rec := do(t, h, request{method: tt.method, path: tt.path})
			if rec.Code != tt.wantStatus {
				t.Errorf("%s %s: status = %d, want %d", tt.method, tt.path, rec.Code, tt.wantStatus)
				continue
			}
			if e := decodeError(t, rec); e.Error.Code != tt.wantCode {
				t.Errorf("%s %s: code = %q, want %q", tt.method, tt.path, e.Error.Code, tt.wantCode)
			}
		}
	})
}
