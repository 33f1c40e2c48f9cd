package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
)

func TestOrderStatusRoute(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		clients := env.Redis.Clients()
		lockers := map[dlock.Mode]dlock.Locker{}
		for _, mode := range dlock.Modes() {
			l, err := dlock.New(mode, clients)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			lockers[mode] = l
		}
		db := env.DB.DB()
		products := stock.NewStore(db)
		orders := order.NewService(db, products, lockers, order.Options{LockWait: 5 * time.Second,
			RedisDecr: redisstock.New(clients[0]), Queue: redisqueue.New(clients[0]), Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(func() { orders.Close() })
		h := httpapi.NewRouter(httpapi.Deps{Products: products, Orders: orders, Statuses: orders, DB: db, Redis: clients,
			AdminToken: testToken, Logger: slog.New(slog.DiscardHandler)})
		q := env.Redis.Key("rq-http")
		a := env.Redis.Key("atomic-http")
		createProduct(t, h, `{"id":"`+q+`","stock":3,"strategy":"redis-queue"}`)
		createProduct(t, h, `{"id":"`+a+`","stock":3,"strategy":"sql-atomic"}`)
		place := func(p, u string) *http.Response {
			rec := do(t, h, request{method: "POST", path: "/api/v1/orders", body: `{"user_id":"` + u + `","product_id":"` + p + `","quantity":1}`})
			return rec.Result()
		}
		r := place(q, "alice")
		loc := r.Header.Get("Location")
		if r.StatusCode != http.StatusAccepted || loc == "" {
			t.Fatalf("queued order: %d %q", r.StatusCode, loc)
		}
		get := func(path string) (int, map[string]any) {
			rec := do(t, h, request{method: "GET", path: path})
			var m map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			return rec.Code, m
		}
		if c, m := get(loc); c != 200 || (m["status"] != "queued" && m["status"] != "created") {
			t.Errorf("GET %s: %d %v", loc, c, m)
		}
		r = place(a, "bob")
		var created struct {
			ID string `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&created)
		if c, m := get("/api/v1/orders/" + created.ID); c != 200 || m["status"] != "created" {
			t.Errorf("GET sql-atomic order %s: %d %v", created.ID, c, m)
		}
		if c, _ := get("/api/v1/orders/" + uuid.NewString()); c != 404 {
			t.Errorf("unknown id: %d, want 404", c)
		}
		for _, bad := range []string{"bad!", strings.Repeat("x", 65), "a%20b"} {
			if c, _ := get("/api/v1/orders/" + bad); c != 400 {
				t.Errorf("malformed %q: %d, want 400", bad, c)
			}
		}
	})
}
