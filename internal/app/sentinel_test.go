package app_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// failoverWithin bounds each wait of the failover test: the Sentinels take
// a second or two to promote the replica, and a loaded machine more.
const failoverWithin = 30 * time.Second

// TestSentinel runs a shop whose lua, naive, fenced, dedupe and redis-decr
// live on a Sentinel-managed master (a real master, replica and three
// Sentinels): it sells lua orders there, not on the first Redis node;
// /readyz names the master; a shop given a name the Sentinels do not know
// is not ready, and says why; and after the master is killed the Sentinels
// promote the replica, /readyz names it, the master-change counter counts
// it, and lua orders sell again. The subtests run in order on one set of
// Sentinels: the last one kills its master.
func TestSentinel(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		sentinels := testenv.NewSentinels(t)
		b := backendsOf(env)
		b.RedisMaster = app.SentinelMaster{Sentinels: sentinels.Addrs(), Name: testenv.SentinelMasterName}
		srv := httptest.NewServer(newShopOn(t, b, app.Config{Logger: testLogger(t, slog.LevelWarn)}).Handler())
		t.Cleanup(srv.Close)
		client := srv.Client()
		ctx := t.Context()

		pid := env.Redis.Key("phone")
		status, body, err := call(ctx, client, "POST", srv.URL+"/api/v1/products",
			fmt.Sprintf(`{"id":%q,"stock":100,"strategy":"lua"}`, pid), testToken)
		if err != nil || status != http.StatusCreated {
			t.Fatalf("create product: %d %v %v", status, body, err)
		}
		order := func(user string) (int, map[string]any) {
			t.Helper()
			status, body, err := call(ctx, client, "POST", srv.URL+"/api/v1/orders",
				fmt.Sprintf(`{"user_id":%q,"product_id":%q,"quantity":1}`, user, pid), "")
			if err != nil {
				t.Fatalf("order for %s: %v", user, err)
			}
			return status, body
		}

		t.Run("sells on the master, not on node 0", func(t *testing.T) {
			if status, body := getReadyz(t, srv); status != http.StatusOK || body["redis_master"] != sentinels.Master() {
				t.Fatalf("readyz = %d %v, want 200 naming redis_master %s", status, body, sentinels.Master())
			}
			env.Redis.Stop(0)
			defer env.Redis.Start(0)
			if status, body := order("alice"); status != http.StatusCreated {
				t.Errorf("lua order with node 0 down: %d %v, want 201: lua locks on the master", status, body)
			}
			if status, body := getReadyz(t, srv); status != http.StatusOK {
				t.Errorf("readyz with node 0 down = %d %v, want 200: redlock has 4 of 5, lua the master", status, body)
			}
		})

		t.Run("no such master", func(t *testing.T) {
			// Another master is other lock servers to the registry: this
			// shop needs a database of its own.
			other := &app.Backends{DB: testenv.NewDB(t, env.Mode).DB(), RedisAddrs: env.Redis.Addrs(),
				RedisMaster: app.SentinelMaster{Sentinels: sentinels.Addrs(), Name: "nosuch"}}
			wrong := httptest.NewServer(newShopOn(t, other, app.Config{}).Handler())
			t.Cleanup(wrong.Close)
			status, body := getReadyz(t, wrong)
			e, _ := body["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if status != http.StatusServiceUnavailable || !strings.Contains(msg, `no master named "nosuch"`) {
				t.Errorf("readyz = %d %v, want 503 saying the Sentinels know no master named \"nosuch\"", status, body)
			}
		})

		t.Run("failover", func(t *testing.T) {
			start := time.Now()
			sentinels.KillMaster()
			sentinels.AwaitMaster(sentinels.Replica(), failoverWithin)
			promoted := time.Since(start)

			await(t, "/readyz to name the replica", func() (bool, string) {
				status, body := getReadyz(t, srv)
				return status == http.StatusOK && body["redis_master"] == sentinels.Replica(), fmt.Sprint(status, body)
			})
			ready := time.Since(start)
			if got := scrape(t, client, srv.URL).value(t, "flashsale_redis_master_changes_total"); got < 1 {
				t.Errorf("flashsale_redis_master_changes_total = %v after a failover, want at least 1", got)
			}

			buyer := 0
			await(t, "a lua order to sell on the new master", func() (bool, string) {
				buyer++
				status, body := order(fmt.Sprintf("after-%d", buyer))
				return status == http.StatusCreated, fmt.Sprint(status, body)
			})
			t.Logf("failover: the Sentinels named the replica %v after the kill, /readyz %v, a lua order sold after %v (%d tries)",
				promoted.Round(time.Millisecond), ready.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), buyer)
		})
	})
}

// getReadyz returns GET /readyz's status and body.
func getReadyz(t *testing.T, srv *httptest.Server) (int, map[string]any) {
	t.Helper()
	status, body, err := call(t.Context(), srv.Client(), "GET", srv.URL+"/readyz", "", "")
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	return status, body
}

// await asks cond every 50 ms until it holds, and fails the test with
// cond's last status if it does not within failoverWithin.
func await(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(failoverWithin)
	for {
		ok, status := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last: %s", failoverWithin, what, status)
		}
		time.Sleep(50 * time.Millisecond) // the condition is the servers' state
	}
}
