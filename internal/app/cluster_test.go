package app_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/porthold"
)

// TestRedisClusterRefused: OpenBackends refuses a --redis-cluster that is
// no cluster (a Redis that answers CLUSTER INFO with an error), one whose
// nodes all refuse connections, and one given beside a Sentinel-managed
// master, each with an error that names the flag.
func TestRedisClusterRefused(t *testing.T) {
	plain, err := embedded.StartRedis(1) // miniredis: no cluster mode
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plain.Close)
	free, err := porthold.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", free[0]) // nothing listens there now
	cases := []struct {
		name string
		cfg  app.Config
		want error
	}{
		{"not a cluster", app.Config{RedisCluster: plain.Addrs()}, app.ErrNotACluster},
		{"unreachable", app.Config{RedisCluster: []string{closed}}, app.ErrClusterUnreachable},
		{"beside Sentinels", app.Config{RedisCluster: []string{closed},
			RedisMaster: app.SentinelMaster{Sentinels: []string{closed}, Name: "m"}}, app.ErrTwoSingleRedis},
		{"malformed", app.Config{RedisCluster: []string{"nohost"}}, app.ErrInvalidRedisAddr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Logger = quiet
			start := time.Now()
			b, err := app.OpenBackends(t.Context(), c.cfg)
			if err == nil {
				b.Close()
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "--redis-cluster") {
				t.Errorf("OpenBackends = %v, want %v naming --redis-cluster", err, c.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("OpenBackends took %v, want it to give up within seconds", d)
			}
		})
	}
}

// TestRedisCluster runs a shop whose single-node roles live on a real
// Redis Cluster: /readyz names its three masters, and every strategy that
// uses that Redis sells there (redlock beside them, on its own nodes), a
// repeated click refused; a shop on the same database without the cluster
// is refused.
func TestRedisCluster(t *testing.T) {
	testenv.Cluster(t, func(t *testing.T, env *testenv.Env) {
		b := backendsOf(env)
		b.RedisCluster = env.Cluster.Addrs()
		srv := httptest.NewServer(newShopOn(t, b, app.Config{Logger: testLogger(t, slog.LevelWarn)}).Handler())
		t.Cleanup(srv.Close)
		client, ctx := srv.Client(), t.Context()

		// Another shop beside it on the same database, without the
		// cluster, is refused: its lua locks would exclude nothing.
		other := backendsOf(env)
		shop, err := app.NewShop(t.Context(), app.Config{Logger: quiet}, other)
		if err == nil {
			shop.Close()
		}
		if !errors.Is(err, app.ErrOtherLockServers) || !strings.Contains(err.Error(), "--redis-cluster") {
			t.Errorf("a shop without the cluster beside it: %v, want ErrOtherLockServers naming --redis-cluster", err)
		}

		status, body := getReadyz(t, srv)
		masters, _ := body["redis_master"].(string)
		if status != http.StatusOK || len(strings.Split(masters, ",")) != 3 {
			t.Fatalf("readyz = %d %v, want 200 naming three masters", status, body)
		}
		for _, st := range []string{"naive", "lua", "fenced", "redis-decr", "redis-queue", "redlock"} {
			pid := env.Redis.Key(st)
			status, body, err := call(ctx, client, "POST", srv.URL+"/api/v1/products",
				fmt.Sprintf(`{"id":%q,"stock":2,"strategy":%q}`, pid, st), testToken)
			if err != nil || status != http.StatusCreated {
				t.Fatalf("%s: create product: %d %v %v", st, status, body, err)
			}
			for i, want := range []int{http.StatusCreated, http.StatusConflict} { // the second click: a duplicate
				status, body, err := call(ctx, client, "POST", srv.URL+"/api/v1/orders",
					fmt.Sprintf(`{"user_id":"alice","product_id":%q,"quantity":1}`, pid), "")
				if st == "redis-queue" && want == http.StatusCreated {
					want = http.StatusAccepted
				}
				if err != nil || status != want {
					t.Errorf("%s: click %d: %d %v %v, want %d", st, i+1, status, body, err, want)
				}
			}
		}
		onCluster := strings.Join(env.Cluster.Keys(), " ")
		for _, st := range []string{"redis-decr", "redis-queue"} {
			if !strings.Contains(onCluster, "{"+env.Redis.Key(st)+"}") {
				t.Errorf("%s: no key of its product on the cluster (%s)", st, onCluster)
			}
		}
	})
}
