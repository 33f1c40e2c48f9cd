package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// TestReadyz takes backends down and brings them back: /readyz answers 503
// unavailable with Retry-After while the database is down, the first Redis
// node is down, or a majority of the Redis nodes is down, and 200 again
// after recovery. /healthz stays 200 throughout.
func TestReadyz(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		h := newRouter(t, env, testToken)

		check := func(t *testing.T, wantStatus int, wantInMsg string) {
			t.Helper()
			rec := do(t, h, request{method: "GET", path: "/readyz"})
			if rec.Code != wantStatus {
				t.Fatalf("readyz status = %d, want %d; body %s", rec.Code, wantStatus, rec.Body)
			}
			if wantStatus == http.StatusServiceUnavailable {
				e := decodeError(t, rec)
				if e.Error.Code != "unavailable" || !strings.Contains(e.Error.Message, wantInMsg) {
					t.Errorf("error = %+v, want unavailable mentioning %q", e.Error, wantInMsg)
				}
				if rec.Header().Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
				}
			}
			if rec := do(t, h, request{method: "GET", path: "/healthz"}); rec.Code != http.StatusOK {
				t.Errorf("healthz status = %d, want 200 whatever the backends do", rec.Code)
			}
		}

		check(t, http.StatusOK, "")

		t.Run("minority of redis down", func(t *testing.T) {
			env.Redis.Stop(3)
			env.Redis.Stop(4)
			check(t, http.StatusOK, "")
			env.Redis.Start(3)
			env.Redis.Start(4)
		})
		t.Run("first redis node down", func(t *testing.T) {
			env.Redis.Stop(0)
			check(t, http.StatusServiceUnavailable, "redis")
			env.Redis.Start(0)
			check(t, http.StatusOK, "")
		})
		t.Run("redis quorum lost", func(t *testing.T) {
			for _, i := range []int{2, 3, 4} {
				env.Redis.Stop(i)
			}
			check(t, http.StatusServiceUnavailable, "2 of 5")
			for _, i := range []int{2, 3, 4} {
				env.Redis.Start(i)
			}
			check(t, http.StatusOK, "")
		})
		t.Run("database down", func(t *testing.T) {
			env.DB.Stop()
			check(t, http.StatusServiceUnavailable, "database")
			env.DB.Start()
			check(t, http.StatusOK, "")
		})
	})
}
