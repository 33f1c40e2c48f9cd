//go:build unix

package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/buyertoken"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/httpapi"
)

// alive reports whether a process with pid runs.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

// ready reports whether the shop at target answers /readyz with 200.
func ready(target string) bool {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(target + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// A process fleet's shops are child processes on the test's backends: a
// kill leaves the port unanswered and the process gone, a restart brings a
// new process to the same port, each start has its line in the shop's
// log, the CPU counts the children, and Close leaves none running.
func TestProcessFleet(t *testing.T) {
	testenv.SkipShort(t, "starts three shop processes; TestShopCrashKillsAndRestarts (package fault) kills them too")
	env := testenv.NewEnv(t, testenv.Embedded)
	logs := t.TempDir()
	f, err := StartFleet(t.Context(), FleetConfig{
		Backends:  &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()},
		Processes: true, SQLitePath: env.DB.Path(), LogDir: logs,
		LockWait: 700 * time.Millisecond, MaxInFlight: 5, BuyerRate: 0.5, BuyerBurst: 1, BuyerSecret: "process-fleet-secret-16+",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pids := f.ShopPIDs()
	// What each child is told: the parent's backends and the shops'
	// settings, all of them.
	want := childConfig{SQLitePath: env.DB.Path(), RedisAddrs: env.Redis.Addrs(), AdminToken: f.AdminToken,
		LockWaitMs: 700, MaxInFlight: 5, BuyerRate: 0.5, BuyerBurst: 1, BuyerSecret: "process-fleet-secret-16+"}
	if got := f.procs.base; !reflect.DeepEqual(got, want) {
		t.Errorf("the children are told %+v, want %+v", got, want)
	}
	api := NewAPI(f.Targets[0], f.AdminToken)
	if err := api.CreateProduct(t.Context(), Product{ID: "p", Name: "p", Stock: 5, Strategy: "sql-atomic", LockTTLMs: 100}); err != nil {
		t.Fatal(err)
	}
	// The buyer secret reached the child (an unsigned click is 401, and
	// spends none of the buyer's rate), and so did the buyer's rate.
	token := buyertoken.Sign([]byte(f.BuyerSecret), "u", time.Now().Add(time.Minute))
	for i, want := range []int{http.StatusUnauthorized, http.StatusCreated, http.StatusTooManyRequests} {
		req, _ := http.NewRequest("POST", f.Targets[1]+"/api/v1/orders", strings.NewReader(`{"user_id":"u","product_id":"p","quantity":1}`))
		req.Header.Set("Content-Type", "application/json")
		if i > 0 {
			req.Header.Set(httpapi.BuyerTokenHeader, token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("click %d of one buyer on shop 2: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if !f.Processes() || len(f.Targets) != DefaultShops || len(pids) != DefaultShops || !strings.Contains(f.Backend, "3 shops as child processes") {
		t.Fatalf("fleet %+v, pids %v: want three child shops", f, pids)
	}
	for i, target := range f.Targets {
		if !ready(target) || !alive(pids[i]) || pids[i] == os.Getpid() {
			t.Errorf("shop %d (pid %d) at %s: not a ready child", i+1, pids[i], target)
		}
	}
	cpu, err := f.CPU.CPU(t.Context())
	if err != nil || cpu <= 0 || !strings.Contains(f.CPU.Describe(), "its 3 shop processes") {
		t.Errorf("CPU = %v, %v (%s); want the children's and this process's", cpu, err, f.CPU.Describe())
	}

	killed, err := f.KillShop(1)
	if err != nil || killed != pids[1] || alive(killed) || ready(f.Targets[1]) {
		t.Fatalf("KillShop(1) = %d, %v; alive %v: want shop 2's pid %d gone, its port unanswered", killed, err, alive(killed), pids[1])
	}
	if _, err := f.CPU.CPU(t.Context()); err == nil {
		t.Error("CPU with a shop down: no error, want it unknown (its /metrics is gone)")
	}
	back, err := f.RestartShop(t.Context(), 1)
	if err != nil || back == killed || !alive(back) || !ready(f.Targets[1]) {
		t.Fatalf("RestartShop(1) = %d, %v; want a new process serving on shop 2's port", back, err)
	}
	if after, err := f.CPU.CPU(t.Context()); err != nil || after < cpu {
		t.Errorf("CPU after the restart: %v, %v; want the dead child's CPU kept (at least %v)", after, err, cpu)
	}
	if got := f.ShopPIDs(); got[1] != back || got[0] != pids[0] {
		t.Errorf("pids %v after the restart, want %d for shop 2 and the others as they were (%v)", got, back, pids)
	}
	log, _ := os.ReadFile(filepath.Join(logs, "shop-2.log"))
	for _, pid := range []int{killed, back} {
		if line := fmt.Sprintf("--- shop 2 started, pid %d, at ", pid); !strings.Contains(string(log), line) {
			t.Errorf("shop-2.log has no %q:\n%s", line, log)
		}
	}

	// A child runs in a process group of its own (a Ctrl-C reaches the
	// parent alone), and exits once its standard input, the pipe from its
	// parent, reaches EOF: when the parent dies, however it dies.
	if own, _ := syscall.Getpgid(os.Getpid()); own == mustPgid(t, pids[2]) {
		t.Errorf("shop 3 is in the load generator's process group %d", own)
	}
	f.procs.shops[2].stdin.Close()
	select {
	case <-f.procs.shops[2].exited:
	case <-time.After(10 * time.Second):
		t.Error("shop 3 runs on after its standard input closed")
	}
	f.Close()
	f.Close() // twice is fine
	for _, pid := range append(pids, back) {
		if alive(pid) {
			t.Errorf("pid %d runs after Close", pid)
		}
	}
}

// A fleet whose shops run in this process has no shop to kill.
func TestInProcessFleetHasNoShopsToKill(t *testing.T) {
	env := testenv.NewEnv(t, testenv.Embedded)
	f, err := StartFleet(t.Context(), FleetConfig{Shops: 1, Backends: &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.KillShop(0); !errors.Is(err, ErrNoShops) {
		t.Errorf("KillShop: %v, want ErrNoShops", err)
	}
	if _, err := f.RestartShop(t.Context(), 0); !errors.Is(err, ErrNoShops) {
		t.Errorf("RestartShop: %v, want ErrNoShops", err)
	}
	if f.Processes() || f.ShopPIDs() != nil || len(f.Targets) != 1 || !ready(f.Targets[0]) {
		t.Errorf("processes %v, pids %v, targets %v: want one shop in process, ready", f.Processes(), f.ShopPIDs(), f.Targets)
	}
}

// A child that cannot start is an error that quotes its last lines, and
// the children started before it are stopped; without a database to name
// no child is started.
func TestProcessFleetThatCannotStart(t *testing.T) {
	testenv.SkipShort(t, "starts a shop process that fails")
	env := testenv.NewEnv(t, testenv.Embedded)
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "shop.db")
	_, err := StartFleet(t.Context(), FleetConfig{
		Backends:  &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()},
		Processes: true, SQLitePath: missing,
	})
	if err == nil || !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "its last lines") {
		t.Fatalf("StartFleet with a database the children cannot open: %v, want the child's exit and its last lines", err)
	}
	_, err = StartFleet(t.Context(), FleetConfig{Backends: &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}, Processes: true})
	if err == nil || !strings.Contains(err.Error(), "need the embedded SQLite file or a MySQL DSN") {
		t.Errorf("StartFleet of children without a database: %v", err)
	}
}

// The children's own side: a process that is not a child goes on at once;
// a description that is not JSON exits 2; a child told of no database
// cannot build its backends.
func TestChildShopRefusesNonsense(t *testing.T) {
	t.Setenv(childShopEnv, "")
	ServeIfChildShop() // returns: this test binary is no child
	if IsChildShop() {
		t.Fatal("IsChildShop with the variable empty")
	}
	t.Setenv(childShopEnv, "{not json")
	if !IsChildShop() {
		t.Fatal("IsChildShop with the variable set: false")
	}
	var stderr strings.Builder
	if code := ServeChildShop(t.Context(), &stderr); code != 2 || !strings.Contains(stderr.String(), childShopEnv) {
		t.Errorf("ServeChildShop = %d, %q; want 2 and the variable named", code, stderr.String())
	}
	if _, err := (childConfig{}).backends(t.Context()); err == nil || !strings.Contains(err.Error(), "no database named") {
		t.Errorf("backends without a database: %v", err)
	}
	if b, err := (childConfig{SQLitePath: filepath.Join(t.TempDir(), "x.db"), RedisAddrs: []string{"a:1"}, Sentinels: []string{"s:1"}, Master: "m"}).backends(context.Background()); err != nil {
		t.Errorf("backends of a new SQLite file: %v", err)
	} else {
		if !slices.Equal(b.RedisAddrs, []string{"a:1"}) || b.RedisMaster.Name != "m" {
			t.Errorf("backends %+v: want the parent's Redis and master", b)
		}
		b.Close()
	}
}

// mustPgid is pid's process group.
func mustPgid(t *testing.T, pid int) int {
	g, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// With nothing given, a process fleet's children open the embedded
// SQLite file the parent made, and sell through it.
func TestEmbeddedProcessFleet(t *testing.T) {
	testenv.SkipShort(t, "starts the embedded backends and three shop processes")
	f, err := StartFleet(t.Context(), FleetConfig{Processes: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.procs.base.SQLitePath; got == "" || !strings.Contains(f.Backend, "embedded SQLite") {
		t.Fatalf("the children open %q on %s, want the embedded SQLite file", got, f.Backend)
	}
	api := NewAPI(f.Targets[0], f.AdminToken)
	if err := api.CreateProduct(t.Context(), Product{ID: "p", Name: "p", Stock: 2, Strategy: "sql-atomic", LockTTLMs: 100}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(f.Targets[2]+"/api/v1/orders", "application/json", strings.NewReader(`{"user_id":"u","product_id":"p","quantity":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a, err := api.Audit(t.Context(), "p"); resp.StatusCode != http.StatusCreated || err != nil || a.Sold != 1 {
		t.Errorf("an order through shop 3: %d; audit through shop 1: %+v, %v; want it sold and seen", resp.StatusCode, a, err)
	}
}

// A child counts as ready once its /readyz answers 200: not while it
// answers 503, nor while nothing listens on its port.
func TestChildReadiness(t *testing.T) {
	var up atomic.Bool
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !up.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		}
	}))
	defer shop.Close()
	p := &shopProcs{ready: &http.Client{Timeout: time.Second}}
	addr := strings.TrimPrefix(shop.URL, "http://")
	if p.isReady(t.Context(), addr) || p.isReady(t.Context(), "127.0.0.1:1") {
		t.Error("ready while answering 503, or while nothing listens")
	}
	up.Store(true)
	if !p.isReady(t.Context(), addr) {
		t.Error("not ready while answering 200")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if p.awaitReady(ctx, &shopProc{addr: "127.0.0.1:1", exited: make(chan struct{})}) {
		t.Error("awaitReady on an ended context: ready")
	}
	if got := (&shopProcs{shops: []*shopProc{{addr: "a:1"}, {addr: "b:2"}}}).targets(); !slices.Equal(got, []string{"http://a:1", "http://b:2"}) {
		t.Errorf("targets = %v, want the shops' URLs in order", got)
	}
}
