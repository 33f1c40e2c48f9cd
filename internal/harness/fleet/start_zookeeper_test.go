package fleet

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/harness/zkproc"
)

// StartZooKeeper starts an ensemble for the fleet's shops (they are ready,
// /readyz asking it), names it in the fleet's Backend, takes its members
// down and back for --zookeeper-kill, and Close stops it.
func TestStartZooKeeper(t *testing.T) {
	testenv.SkipShort(t, "starts three ZooKeeper JVMs")
	if _, _, err := zkproc.Binaries(); err != nil {
		t.Skip(err)
	}
	env := testenv.NewEnv(t, testenv.Embedded)
	f, err := StartFleet(t.Context(), FleetConfig{Shops: 1, StartZooKeeper: true,
		Backends: &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}})
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(f.Backend, "a ZooKeeper ensemble (")
	servers := strings.Split(strings.Split(list, ";")[0], ",")
	if !ok || len(servers) != zkproc.Members {
		f.Close()
		t.Fatalf("Backend %q: want a ZooKeeper ensemble of %d members named", f.Backend, zkproc.Members)
	}
	if !ready(f.Targets[0]) {
		t.Errorf("the shop on the fleet's ensemble is not ready")
	}
	// --zookeeper-kill: a member killed is gone at once, and restore
	// brings it back serving.
	restore, err := f.ZooKeeperMembers.Kill(t.Context(), []int{0}, 0)
	if err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if c, err := net.DialTimeout("tcp", servers[0], time.Second); err == nil {
		c.Close()
		t.Errorf("member 1 (%s) still answers after Kill", servers[0])
	}
	if err := restore(t.Context()); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if mode, err := zkproc.Mode(t.Context(), servers[0]); mode == "" {
		t.Errorf("member 1 after restore: mode %q, %v; want it serving", mode, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if c, err := net.DialTimeout("tcp", s, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still answers after Close", s)
		}
	}
}
