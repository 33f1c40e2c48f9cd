package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// testToken is the admin token of routers built by newRouter.
const testToken = "test-admin-token"

// newRouter builds a router on env's backends the way one shop process
// would: its own Redis clients and one locker per mode. token "" closes
// the admin routes.
func newRouter(t *testing.T, env *testenv.Env, token string) http.Handler {
	t.Helper()
	return newRouterWith(t, env, httpapi.Deps{AdminToken: token})
}

// newRouterWith is newRouter with deps's settings (AdminToken,
// BuyerSecret, BuyerRate...); the collaborators are filled in.
func newRouterWith(t *testing.T, env *testenv.Env, deps httpapi.Deps) http.Handler {
	t.Helper()
	clients := env.Redis.Clients()
	lockers := map[dlock.Mode]dlock.Locker{}
	for _, mode := range dlock.Modes() {
		l, err := dlock.New(mode, clients)
		if err != nil {
			t.Fatalf("dlock.New(%s): %v", mode, err)
		}
		t.Cleanup(func() { l.Close() })
		lockers[mode] = l
	}
	db := env.DB.DB()
	products := stock.NewStore(db)
	orders := order.NewService(db, products, lockers, order.Options{
		LockWait: 5 * time.Second, RedisDecr: redisstock.New(clients[0]),
	})
	deps.Products, deps.Orders, deps.DB, deps.Redis = products, orders, db, clients
	deps.Logger = slog.New(slog.DiscardHandler)
	return httpapi.NewRouter(deps)
}

// request describes one HTTP call; zero fields mean: no body, JSON content
// type when there is a body, no Authorization.
type request struct {
	method, path, body string
	contentType        *string
	token              string
}

func do(t *testing.T, h http.Handler, r request) *httptest.ResponseRecorder {
	t.Helper()
	req := newRequest(r.method, r.path, r.body)
	if r.contentType != nil {
		req.Header.Del("Content-Type")
		if *r.contentType != "" {
			req.Header.Set("Content-Type", *r.contentType)
		}
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	return serve(h, req)
}

// newRequest builds a request; a body gets a JSON content type.
func newRequest(method, path, body string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// apiError is the error body of every failed request.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeError decodes rec's body as an error, failing t if it is not one.
func decodeError(t *testing.T, rec *httptest.ResponseRecorder) apiError {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" {
		t.Fatalf("body %q is not an error {\"error\":{\"code\",\"message\"}} (%v)", rec.Body.String(), err)
	}
	return e
}

// createProduct creates a product through the API and fails t unless 201.
func createProduct(t *testing.T, h http.Handler, body string) {
	t.Helper()
	rec := do(t, h, request{method: "POST", path: "/api/v1/products", body: body, token: testToken})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create product: status %d, want 201; body %s", rec.Code, rec.Body)
	}
}

func ptr(s string) *string { return &s }
