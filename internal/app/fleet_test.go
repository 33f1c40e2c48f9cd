package app_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestThreeShopsSellExactlyTheStock is the end-to-end check of the HTTP
// contract: three shop instances on the same backends (each with its own
// Redis clients and lockers, like three processes), 500 distinct buyers at
// once spread over them, 50 units. With lua and redlock exactly 50 orders
// succeed, every other buyer hears sold_out (or, at worst, a clean 503), and
// the audit is consistent with nothing oversold. The order package tests the
// flow in depth; this test is about the whole stack over HTTP.
func TestThreeShopsSellExactlyTheStock(t *testing.T) {
	const (
		buyers = 500
		units  = 50
	)
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		for _, mode := range []strategy.Name{strategy.Lua, strategy.Redlock} {
			t.Run(string(mode), func(t *testing.T) {
				var urls []string
				for range 3 {
					// A few orders in flight per shop: embedded redlock under -race
					// on a busy 2-core box collapses into 503s with more (see
					// internal/httpapi/admission.go); real servers take the default.
					cfg := app.Config{LockWait: 30 * time.Second, MaxInFlightOrders: 4, Logger: testLogger(t, slog.LevelError)}
					srv := httptest.NewServer(newShop(t, env, cfg).Handler())
					t.Cleanup(srv.Close)
					urls = append(urls, srv.URL)
				}
				client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: buyers}}
				t.Cleanup(client.CloseIdleConnections)
				ctx := t.Context()

				pid := env.Redis.Key("p-" + string(mode))
				status, body, err := call(ctx, client, "POST", urls[0]+"/api/v1/products",
					fmt.Sprintf(`{"id":%q,"stock":%d,"strategy":%q}`, pid, units, mode), testToken)
				if err != nil || status != http.StatusCreated {
					t.Fatalf("create product: %d %v %v", status, body, err)
				}

				var created, soldOut, unavailable atomic.Int64
				failures := make(chan string, buyers)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range buyers {
					wg.Go(func() {
						<-start
						url := urls[i%len(urls)] + "/api/v1/orders"
						status, body, err := call(ctx, client, "POST", url,
							fmt.Sprintf(`{"user_id":"buyer-%d","product_id":%q,"quantity":1}`, i, pid), "")
						switch {
						case err != nil:
							failures <- fmt.Sprintf("buyer %d: %v", i, err)
						case status == http.StatusCreated:
							created.Add(1)
						case status == http.StatusConflict && errorCode(body) == "sold_out":
							soldOut.Add(1)
						case status == http.StatusServiceUnavailable:
							if unavailable.Add(1) <= 3 {
								t.Logf("buyer %d: 503 %v", i, body)
							}
						default:
							failures <- fmt.Sprintf("buyer %d: %d %v", i, status, body)
						}
					})
				}
				close(start)
				wg.Wait()
				close(failures)
				for f := range failures {
					t.Error(f)
				}

				if got := created.Load(); got != units {
					t.Errorf("201 responses = %d, want exactly %d (sold_out %d, 503 %d)", got, units, soldOut.Load(), unavailable.Load())
				}
				if unavailable.Load() > 0 {
					t.Logf("%d buyers got a 503 (lock wait or backend); allowed, but worth a look", unavailable.Load())
				}

				status, audit, err := call(ctx, client, "GET", urls[2]+"/api/v1/products/"+pid+"/audit", "", testToken)
				if err != nil || status != http.StatusOK {
					t.Fatalf("audit: %d %v %v", status, audit, err)
				}
				want := map[string]any{"orders": float64(units), "sold": float64(units), "stock": 0.0,
					"oversold": 0.0, "duplicate_orders": 0.0, "consistent": true}
				for k, v := range want {
					if audit[k] != v {
						t.Errorf("audit[%q] = %v, want %v (audit %v)", k, audit[k], v, audit)
					}
				}
			})
		}
	})
}
