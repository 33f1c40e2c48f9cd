package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/buyertoken"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/httpapi"
)

var buyerSecret = []byte("test-buyer-secret-0123456789")

// orderAs posts an order for user with token in X-Buyer-Token ("" sends
// none).
func orderAs(t *testing.T, h http.Handler, product, user, token string) (int, string) {
	t.Helper()
	req := newRequest("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":%q,"product_id":%q,"quantity":1}`, user, product))
	if token != "" {
		req.Header.Set(httpapi.BuyerTokenHeader, token)
	}
	rec := serve(h, req)
	if rec.Code >= 300 {
		return rec.Code, decodeError(t, rec).Error.Code
	}
	return rec.Code, ""
}

// soldSoFar reads the product's audit: orders written and stock left.
func soldSoFar(t *testing.T, h http.Handler, product string) (orders, stock int) {
	t.Helper()
	rec := do(t, h, request{method: "GET", path: "/api/v1/products/" + product + "/audit", token: testToken})
	var a struct{ Orders, Stock int }
	if err := json.Unmarshal(rec.Body.Bytes(), &a); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("audit: status %d, body %s (%v)", rec.Code, rec.Body, err)
	}
	return a.Orders, a.Stock
}

// TestBuyerToken: with a buyer secret, only a valid token of the order's
// own buyer places it; every refusal writes nothing.
func TestBuyerToken(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		h := newRouterWith(t, env, httpapi.Deps{AdminToken: testToken, BuyerSecret: string(buyerSecret)})
		pid := env.Redis.Key("p")
		createProduct(t, h, fmt.Sprintf(`{"id":%q,"stock":2,"lock_mode":"lua"}`, pid))
		later := time.Now().Add(time.Hour)

		refusals := []struct {
			name, token, code string
			status            int
		}{
			{"missing", "", "unauthorized", http.StatusUnauthorized},
			{"garbage", "not-a-token", "unauthorized", http.StatusUnauthorized},
			{"forged", buyertoken.Sign([]byte("another secret, sixteen+"), "alice", later), "unauthorized", http.StatusUnauthorized},
			{"expired", buyertoken.Sign(buyerSecret, "alice", time.Now().Add(-time.Second)), "unauthorized", http.StatusUnauthorized},
			{"another buyer's", buyertoken.Sign(buyerSecret, "bob", later), "forbidden", http.StatusForbidden},
			{"another case of the id", buyertoken.Sign(buyerSecret, "Alice", later), "forbidden", http.StatusForbidden},
		}
		for _, r := range refusals {
			t.Run(r.name, func(t *testing.T) {
				status, code := orderAs(t, h, pid, "alice", r.token)
				if status != r.status || code != r.code {
					t.Errorf("got %d %s, want %d %s", status, code, r.status, r.code)
				}
			})
		}
		t.Run("nothing written on refusal", func(t *testing.T) {
			if orders, stock := soldSoFar(t, h, pid); orders != 0 || stock != 2 {
				t.Errorf("orders, stock = %d, %d; want 0, 2", orders, stock)
			}
		})
		t.Run("own token", func(t *testing.T) {
			if status, code := orderAs(t, h, pid, "alice", buyertoken.Sign(buyerSecret, "alice", later)); status != http.StatusCreated {
				t.Fatalf("got %d %s, want 201", status, code)
			}
			if orders, stock := soldSoFar(t, h, pid); orders != 1 || stock != 1 {
				t.Errorf("orders, stock = %d, %d; want 1, 1", orders, stock)
			}
		})
		t.Run("challenge", func(t *testing.T) {
			rec := serve(h, newRequest("POST", "/api/v1/orders", `{}`))
			if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("status %d, WWW-Authenticate %q; want 401 with a challenge", rec.Code, rec.Header().Get("WWW-Authenticate"))
			}
		})
	})
}

// TestBuyerTokenBeforeRate: a click refused for its token spends none of
// the buyer's allowance, so a forger cannot lock a buyer out.
func TestBuyerTokenBeforeRate(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		h := newRouterWith(t, env, httpapi.Deps{AdminToken: testToken, BuyerSecret: string(buyerSecret), BuyerRate: 0.001, BuyerBurst: 1})
		pid := env.Redis.Key("p")
		createProduct(t, h, fmt.Sprintf(`{"id":%q,"stock":2,"lock_mode":"lua"}`, pid))
		later := time.Now().Add(time.Hour)
		if status, _ := orderAs(t, h, pid, "alice", buyertoken.Sign(buyerSecret, "mallory", later)); status != http.StatusForbidden {
			t.Fatalf("mallory's token for alice: %d, want 403", status)
		}
		if status, code := orderAs(t, h, pid, "alice", buyertoken.Sign(buyerSecret, "alice", later)); status != http.StatusCreated {
			t.Errorf("alice's own click after a refused one: %d %s, want 201", status, code)
		}
	})
}

// TestBuyerTokenOff: without a secret the shop is open, as the demo is:
// no token needed, and a token sent is not read.
func TestBuyerTokenOff(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		h := newRouter(t, env, testToken)
		pid := env.Redis.Key("p")
		createProduct(t, h, fmt.Sprintf(`{"id":%q,"stock":2,"lock_mode":"lua"}`, pid))
		if status, code := orderAs(t, h, pid, "alice", ""); status != http.StatusCreated {
			t.Errorf("no token: %d %s, want 201", status, code)
		}
		if status, code := orderAs(t, h, pid, "bob", "garbage"); status != http.StatusCreated {
			t.Errorf("garbage token: %d %s, want 201", status, code)
		}
	})
}
