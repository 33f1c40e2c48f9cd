package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// TestAdminAuth checks both admin routes without a token, with a wrong one,
// with the right one, and on a shop that has no token configured.
func TestAdminAuth(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		open := newRouter(t, env, testToken)
		closed := newRouter(t, env, "")
		pid := env.Redis.Key("p")
		body := fmt.Sprintf(`{"id":%q,"stock":3,"lock_mode":"lua"}`, pid)

		routes := []struct{ name, method, path, body string }{
			{"create product", "POST", "/api/v1/products", body},
			{"audit", "GET", "/api/v1/products/" + pid + "/audit", ""},
		}
		tests := []struct {
			name       string
			router     http.Handler
			header     string
			wantStatus int
			wantCode   string
			wantInMsg  string
		}{
			{"no token", open, "", 401, "unauthorized", "Authorization: Bearer"},
			{"wrong token", open, "Bearer " + testToken + "x", 401, "unauthorized", "wrong"},
			{"prefix of the token", open, "Bearer " + testToken[:4], 401, "unauthorized", "wrong"},
			{"basic scheme", open, "Basic " + testToken, 401, "unauthorized", "Bearer"},
			{"none configured", closed, "Bearer " + testToken, 403, "forbidden", "--admin-token"},
			{"right token", open, "Bearer " + testToken, 0, "", ""},
		}
		for _, route := range routes {
			for _, tt := range tests {
				t.Run(route.name+"/"+tt.name, func(t *testing.T) {
					req := newRequest(route.method, route.path, route.body)
					if tt.header != "" {
						req.Header.Set("Authorization", tt.header)
					}
					rec := serve(tt.router, req)
					if tt.wantStatus == 0 {
						if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
							t.Fatalf("status = %d, want 200 or 201; body %s", rec.Code, rec.Body)
						}
						return
					}
					if rec.Code != tt.wantStatus {
						t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
					}
					e := decodeError(t, rec)
					if e.Error.Code != tt.wantCode || !strings.Contains(e.Error.Message, tt.wantInMsg) {
						t.Errorf("error = %+v, want code %q and a message mentioning %q", e.Error, tt.wantCode, tt.wantInMsg)
					}
					if tt.wantStatus == http.StatusUnauthorized {
						if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
							t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", got)
						}
					}
				})
			}
		}
	})
}
