package fault

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The cluster failover's settings are checked: it kills only a cluster it
// started, one failover kind at a time, no sweep; it breaks lua and
// redis-queue's answered orders, and sells --failover's sale with
// redis-queue.
func TestClusterFailoverChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    ClusterFailover
		p    Plan
		want string
	}{
		{"on", ClusterFailover{Enabled: true, Rounds: 3}, Plan{}, ""},
		{"off", ClusterFailover{Rounds: DefaultFailovers}, Plan{Targets: true, Cluster: true}, ""},
		{"too many", ClusterFailover{Enabled: true, Rounds: 11}, Plan{}, "cluster-failovers: 11, want 0..10"},
		{"rounds alone", ClusterFailover{Rounds: 2}, Plan{}, "cluster-failovers: only with --cluster-failover"},
		{"a cluster of someone else's", ClusterFailover{Enabled: true, Rounds: 3}, Plan{Cluster: true}, "cluster-failover: not with --redis-cluster"},
		{"a fleet of someone else's", ClusterFailover{Enabled: true, Rounds: 3}, Plan{Targets: true}, "cluster-failover: not with --redis-cluster or --targets"},
		{"Sentinels", ClusterFailover{Enabled: true, Rounds: 3}, Plan{Sentinels: true}, "cluster-failover: not with --redis-sentinel"},
		{"a sweep", ClusterFailover{Enabled: true, Rounds: 3}, Plan{Sweep: true}, "sweep: not with --cluster-failover"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.f.Check(tc.p)
			if (tc.want == "") != (len(got) == 0) || (tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want))) {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := (&ClusterFailover{Enabled: true}).Ready(&fleet.Fleet{}); !errors.Is(err, ErrNoControl) {
		t.Errorf("Ready without a cluster: %v, want ErrNoControl", err)
	}
	d := (&ClusterFailover{}).Defaults()
	if got := d[len(d)-1]; got.Flag != "strategies" || !slices.Contains(strings.Split(got.Value, ","), "redis-queue") {
		t.Errorf("Defaults' rows = %v, want --strategies with redis-queue", got)
	}
	cf := &ClusterFailover{}
	for st, want := range map[strategy.Name]bool{strategy.Lua: true, strategy.RedisQueue: true, strategy.Fenced: false, strategy.RedisDecr: false} {
		if got := cf.Breaks(st, time.Second); got != want {
			t.Errorf("Breaks(%s) = %v, want %v", st, got, want)
		}
	}
	var cfg fleet.FleetConfig
	cf.Provision(&cfg)
	if !cfg.StartCluster || cfg.ClusterNodeTimeout != ClusterFailoverNodeTimeout {
		t.Errorf("Provision: %+v, want a cluster started with the failover's node timeout", cfg)
	}
}

// On a real Redis Cluster of six redis-server processes:
//
//   - a row whose lock is elsewhere: the slot's master is killed after a
//     moment of the held link, the cluster promotes its replica, the old
//     master rejoins as the replica;
//   - a lua row: the link is held at the master's grant of the lock, the
//     master killed, and the second token the promoted replica grants
//     while the holder works is counted.
func TestClusterFailoverOnRealProcesses(t *testing.T) {
	required := os.Getenv(testenv.EnvRequireRedisCluster) == "1"
	if !required {
		testenv.SkipShort(t, "starts six redis-server processes; TestClusterFailoverChecks checks the settings")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := redisproc.StartCluster(ctx, redisproc.ClusterConfig{Dir: t.TempDir(), NodeTimeout: ClusterFailoverNodeTimeout})
	if errors.Is(err, redisproc.ErrMissingClusterBinaries) && !required {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	fl := &fleet.Fleet{Cluster: c}
	run := func(t *testing.T, a *Attack, during func(master, replica *redisproc.Process)) FailoverRound {
		t.Helper()
		sh, err := c.SlotShard(t.Context(), order.ProductKey(a.Product))
		if err != nil || len(sh.Replicas) != 1 {
			t.Fatalf("the product's shard: %+v, %v", sh, err)
		}
		stopped := make(chan struct{})
		a.Fleet, a.Stopped = fl, stopped
		armed, err := (&ClusterFailover{Enabled: true, Rounds: 1}).Arm(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		during(sh.Master, sh.Replicas[0])
		close(stopped)
		rec, err := armed.Stop(t.Context(), nil)
		f, _ := rec.(*Failover)
		if err != nil || f == nil || len(f.Rounds) != 1 || f.Err != "" || !f.Cluster {
			t.Fatalf("Stop = %+v, %v; want one round on the cluster without error", rec, err)
		}
		after, err := c.SlotShard(t.Context(), order.ProductKey(a.Product))
		if err != nil || after.Master != sh.Replicas[0] || len(after.Replicas) != 1 || after.Replicas[0].Addr != sh.Master.Addr {
			t.Errorf("after the round: %+v, %v; want the replica the master, the old master its replica", after, err)
		}
		return f.Rounds[0]
	}
	t.Run("fires", func(t *testing.T) {
		r := run(t, &Attack{Strategy: strategy.SQLAtomic, Product: "p"}, func(_, replica *redisproc.Process) {
			if err := c.AwaitMaster(t.Context(), replica); err != nil { // the round needs no buyer
				t.Error(err)
			}
		})
		if r.Held < failoverMoment || r.Promoted <= 0 || r.Caught || r.GrantedTwice != -1 {
			t.Errorf("round %+v: want the link held a moment, a promotion, nothing caught", r)
		}
	})
	t.Run("counts a second grant", func(t *testing.T) {
		key := order.ProductKey("lua-row")
		r := run(t, &Attack{Strategy: strategy.Lua, Product: "lua-row", Work: 8 * time.Second}, func(master, replica *redisproc.Process) {
			// The holder's grant, as lua's SET NX PX sends it: held from the replica.
			if err := master.Client.SetNX(t.Context(), key, "holder", 12*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.AwaitMaster(t.Context(), replica); err != nil {
				t.Fatal(err)
			}
			// The promoted replica never heard of it, and grants it again.
			if err := replica.Client.SetNX(t.Context(), key, "second", 12*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
		})
		if !r.Caught || r.GrantedTwice != 1 || r.Behind <= 0 {
			t.Errorf("round %+v: want the holder caught, the replica behind, one second grant", r)
		}
	})
	t.Run("stops before the kill when the attack stops", func(t *testing.T) {
		// lua's round waits for the master's next grant; none comes.
		sh, err := c.SlotShard(t.Context(), order.ProductKey("idle"))
		if err != nil {
			t.Fatal(err)
		}
		stopped := make(chan struct{})
		armed, err := (&ClusterFailover{Enabled: true, Rounds: 2}).Arm(t.Context(),
			&Attack{Strategy: strategy.Lua, Product: "idle", Fleet: fl, Stopped: stopped})
		if err != nil {
			t.Fatal(err)
		}
		close(stopped)
		rec, err := armed.Stop(t.Context(), nil)
		if f, _ := rec.(*Failover); err != nil || f == nil || len(f.Rounds) != 0 || f.Err != "" {
			t.Fatalf("Stop = %+v, %v; want no round and no error", rec, err)
		}
		after, err := c.SlotShard(t.Context(), order.ProductKey("idle"))
		if err != nil || after.Master != sh.Master {
			t.Errorf("after a stop before the kill: master %+v (%v), want %s still", after.Master, err, sh.Master.Addr)
		}
		if err := c.AwaitHealthy(t.Context()); err != nil {
			t.Error(err)
		}
	})
}

// With no round planned, the failover arms at once and records nothing.
func TestClusterFailoverOfNoRounds(t *testing.T) {
	armed, err := (&ClusterFailover{Enabled: true}).Arm(t.Context(), &Attack{Strategy: strategy.Lua})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := armed.Stop(t.Context(), nil); rec != nil || err != nil {
		t.Errorf("Stop = %v, %v; want nil, nil", rec, err)
	}
}
