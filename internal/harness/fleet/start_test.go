package fleet

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// The default fleet needs nothing installed: three shops in this process
// on embedded backends, each Redis node and etcd member under the fleet's
// control, and a product sold through it end to end. Close stops the
// shops and the backends, and may be called again.
func TestStartFleetEmbedded(t *testing.T) {
	testenv.SkipShort(t, "starts the embedded backends and three shops; TestInProcessFleetHasNoShopsToKill starts one")
	f, err := StartFleet(t.Context(), FleetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Targets) != DefaultShops || len(f.RedisAddrs) != RedisNodes || len(f.AdminToken) != 32 {
		t.Fatalf("targets %v, nodes %v, token %q: want three shops, five nodes, a 16-byte token", f.Targets, f.RedisAddrs, f.AdminToken)
	}
	for _, want := range []string{"embedded SQLite", "5 embedded miniredis nodes", "a 3-member embedded etcd cluster"} {
		if !strings.Contains(f.Backend, want) {
			t.Errorf("backend %q does not say %q", f.Backend, want)
		}
	}
	if _, ok := f.Nodes.(*stoppedNodes); !ok {
		t.Errorf("nodes %T, want the embedded nodes stopped", f.Nodes)
	}
	if _, ok := f.EtcdMembers.(*stoppedMembers); !ok {
		t.Errorf("etcd members %T, want the embedded members stopped", f.EtcdMembers)
	}
	if _, ok := f.Restarts.(*crashedNodes); !ok {
		t.Errorf("restarts %T, want the embedded nodes crashed", f.Restarts)
	}
	if _, ok := f.CPU.(tally.ProcessCPU); !ok {
		t.Errorf("CPU %T, want this process's", f.CPU)
	}
	api := NewAPI(f.Targets[2], f.AdminToken)
	if err := api.CreateProduct(t.Context(), Product{ID: "p1", Name: "phone", Stock: 3, Strategy: "sql-atomic", LockTTLMs: 100}); err != nil {
		t.Fatal(err)
	}
	if a, err := api.Audit(t.Context(), "p1"); err != nil || a.InitialStock != 3 || a.Stock != 3 || !a.Consistent {
		t.Errorf("audit of the new product = %+v, %v; want 3 of 3 left", a, err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if ready(f.Targets[0]) {
		t.Error("a shop answers after Close")
	}
	if err := f.Close(); err != nil {
		t.Errorf("a second Close = %v", err)
	}
}

// With real Redis nodes and --redis-restart the shops reach the nodes
// through the fleet's proxies, which its restarts drop; the report says
// so. (The nodes here are embedded servers the fleet does not own, as real
// ones would be.)
func TestStartFleetBehindProxies(t *testing.T) {
	env := testenv.NewEnv(t, testenv.Embedded)
	f, err := StartFleet(t.Context(), FleetConfig{Shops: 1, RedisRestart: true,
		Backends: &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.DirectAddrs()}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, ok := f.Restarts.(*proxiedNodes)
	if !ok || !strings.Contains(f.Backend, "behind the load generator's proxies") {
		t.Fatalf("restarts %T, backend %q: want the fleet's proxies", f.Restarts, f.Backend)
	}
	if f.RedisAddrs[0] != env.Redis.DirectAddrs()[0] || p.proxyAddrs()[0] == f.RedisAddrs[0] {
		t.Errorf("nodes %v, proxies %v: the fleet watches the nodes themselves, the shops dial the proxies", f.RedisAddrs, p.proxyAddrs())
	}
	if _, ok := f.Nodes.(*pausedNodes); !ok {
		t.Errorf("nodes %T, want real nodes paused", f.Nodes)
	}
	if f.EtcdMembers != nil {
		t.Errorf("etcd members %T: a cluster the fleet did not start is not its to stop", f.EtcdMembers)
	}
}

// StartSentinels starts a Sentinel set of the fleet's own, its files in
// the log folder, closed with the fleet; without the binaries it starts
// nothing, and says how to install them.
func TestStartFleetWithSentinels(t *testing.T) {
	env := testenv.NewEnv(t, testenv.Embedded)
	backends := &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}
	t.Run("without the binaries", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		logs := t.TempDir()
		_, err := StartFleet(t.Context(), FleetConfig{Shops: 1, StartSentinels: true, LogDir: logs, Backends: backends})
		if !errors.Is(err, redisproc.ErrMissingBinaries) || !strings.Contains(err.Error(), redisproc.InstallHint) {
			t.Errorf("StartFleet = %v, want the missing binaries and %q", err, redisproc.InstallHint)
		}
		if _, err := os.Stat(filepath.Join(logs, "redis")); err == nil {
			t.Error("a folder for the set was made, want nothing started")
		}
	})
	t.Run("with them", func(t *testing.T) {
		testenv.SkipShort(t, "starts redis-server and redis-sentinel processes")
		if _, _, err := redisproc.Binaries(); err != nil && os.Getenv(testenv.EnvRequireSentinel) != "1" {
			t.Skip(err)
		}
		logs := t.TempDir()
		f, err := StartFleet(t.Context(), FleetConfig{Shops: 1, StartSentinels: true, LogDir: logs, Backends: backends})
		if err != nil {
			t.Fatal(err)
		}
		procs := f.Sentinels.Processes()
		if !strings.Contains(f.Backend, "a Sentinel-managed master "+f.Sentinels.Master().Addr) {
			t.Errorf("backend %q does not name the master", f.Backend)
		}
		// The shops lock on the master the Sentinels name, as /readyz says.
		resp, err := http.Get(f.Targets[0] + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), `"redis_master":"`+f.Sentinels.Master().Addr+`"`) {
			t.Errorf("/readyz = %s, want the Sentinels' master %s", body, f.Sentinels.Master().Addr)
		}
		if logsOf, _ := filepath.Glob(filepath.Join(logs, "redis", "sentinel*.log")); len(logsOf) != 3 {
			t.Errorf("Sentinel logs %v, want three in the log folder", logsOf)
		}
		f.Close()
		for _, p := range procs {
			select {
			case <-p.Exited():
			case <-time.After(10 * time.Second):
				t.Errorf("%s still runs after the fleet's Close", p.Name)
			}
		}
	})
}

// The report's words for the backends.
func TestDescribeBackends(t *testing.T) {
	r, err := embedded.StartRedis(2)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tc := range []struct {
		b       *app.Backends
		proxied bool
		want    string
	}{
		{&app.Backends{RedisAddrs: []string{"a:1", "b:2"}, EtcdEndpoints: []string{"e:1"}}, false, "MySQL + 2 Redis nodes (a:1,b:2) + etcd at e:1"},
		{&app.Backends{RedisAddrs: []string{"a:1"}}, true, "MySQL + 1 Redis nodes (a:1) behind the load generator's proxies + etcd at "},
		{&app.Backends{Embedded: r, RedisAddrs: r.Addrs()}, false, "MySQL + 2 embedded miniredis nodes (" + strings.Join(r.Addrs(), ",") + ")"},
	} {
		if got := describeBackends(tc.b, tc.proxied); !strings.HasPrefix(got, tc.want) {
			t.Errorf("describeBackends = %q, want %q", got, tc.want)
		}
	}
	if orDefault(0, time.Second) != time.Second || orDefault(time.Minute, time.Second) != time.Minute {
		t.Error("orDefault")
	}
	a, _ := randomToken()
	b, _ := randomToken()
	if len(a) != 32 || a == b {
		t.Errorf("tokens %q, %q: want 32 hex digits, never the same", a, b)
	}
}

// Someone else's fleet: the shops' CPU read from their /metrics, and,
// given its five nodes, nodes paused for a kill and emptied for a restart;
// Close does nothing to it.
func TestExternalFleet(t *testing.T) {
	nodes := []string{"a:1", "b:1", "c:1", "d:1", "e:1"}
	f := ExternalFleet([]string{"http://s:1"}, "tok", nodes)
	if _, ok := f.CPU.(tally.ScrapeCPU); !ok || f.Backend != "external shops" || f.AdminToken != "tok" {
		t.Errorf("fleet %+v: want its shops' CPU scraped, its token kept", f)
	}
	if _, ok := f.Nodes.(*pausedNodes); !ok || !strings.Contains(f.Nodes.Describe(), "CLIENT PAUSE") {
		t.Errorf("nodes %T: want them paused", f.Nodes)
	}
	if _, ok := f.Restarts.(*droppedClients); !ok || len(f.RedisAddrs) != 5 || !strings.Contains(f.Restarts.Describe(), "CLIENT KILL") {
		t.Errorf("restarts %T, nodes %v: want clients dropped on the five nodes", f.Restarts, f.RedisAddrs)
	}
	if f.Processes() || f.EtcdMembers != nil || f.Close() != nil {
		t.Error("an external fleet's shops or members are not the load generator's")
	}
	if bare := ExternalFleet([]string{"http://s:1"}, "tok", nil); bare.Nodes != nil || bare.Restarts != nil {
		t.Errorf("without its nodes: nodes %T, restarts %T; want no control", bare.Nodes, bare.Restarts)
	}
	var none *Fleet
	if none.Close() != nil {
		t.Error("Close of a nil fleet")
	}
}

// Without a log folder, the fleet's Sentinel set keeps its files in a
// temporary folder of its own, gone after Close.
func TestSentinelsInATemporaryFolder(t *testing.T) {
	testenv.SkipShort(t, "starts redis-server and redis-sentinel processes")
	if _, _, err := redisproc.Binaries(); err != nil && os.Getenv(testenv.EnvRequireSentinel) != "1" {
		t.Skip(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	env := testenv.NewEnv(t, testenv.Embedded)
	f, err := StartFleet(t.Context(), FleetConfig{Shops: 1, StartSentinels: true, Backends: &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}})
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "flashsale-sentinels-*"))
	if len(dirs) != 1 {
		t.Fatalf("temporary folders %v, want the set's one", dirs)
	}
	f.Close()
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("%s after Close: %v, want it removed", dirs[0], err)
	}
}

// Close returns what stopping the fleet's parts returned, once: a second
// Close has nothing left to stop.
func TestCloseOnce(t *testing.T) {
	calls := 0
	f := &Fleet{close: func() error { calls++; return errors.New("shop 2 did not stop") }}
	if err := f.Close(); err == nil || err.Error() != "shop 2 did not stop" {
		t.Errorf("Close = %v, want the shop's error", err)
	}
	if err := f.Close(); err != nil || calls != 1 {
		t.Errorf("a second Close = %v after %d stops, want nil after one", err, calls)
	}
}
