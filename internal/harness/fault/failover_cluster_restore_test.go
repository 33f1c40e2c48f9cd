package fault

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/strategy"
)

// A round that fails must still leave the cluster whole for the next
// attack (the next row runs on it): no master left dead, no master left
// announcing a closed proxy.

// TestClusterRoundPromotionNeverComes: the replica of the product's
// slot never takes over (cluster-replica-no-failover, as a replica whose
// data is too old would refuse). The round gives up after
// restoreBound; the old master must run again and the cluster be
// healthy, not left without a master for the slot.
func TestClusterRoundPromotionNeverComes(t *testing.T) {
	c := ownCluster(t)
	sh, err := c.SlotShard(t.Context(), order.ProductKey("p"))
	if err != nil || len(sh.Replicas) != 1 {
		t.Fatalf("the product's shard: %+v, %v", sh, err)
	}
	if err := sh.Replicas[0].Client.ConfigSet(t.Context(), "cluster-replica-no-failover", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	rec := oneRound(t, c, &Attack{Strategy: strategy.SQLAtomic, Product: "p"})
	if rec.Err == "" {
		t.Fatalf("the round: %+v, want an error (no promotion)", rec)
	}
	t.Logf("the round's error: %s", rec.Err)
	wantHealthy(t, c, "failed")
}

// TestClusterRoundReplicaNeverFollows: the replica does not answer
// while the round waits for it to follow the link (a stalled process, here
// SIGSTOP). The round gives up before any kill; the master must announce
// its own port again, or its replica and every client that reloads the
// slots are sent to the closed proxy.
func TestClusterRoundReplicaNeverFollows(t *testing.T) {
	c := ownCluster(t)
	sh, err := c.SlotShard(t.Context(), order.ProductKey("p"))
	if err != nil || len(sh.Replicas) != 1 {
		t.Fatalf("the product's shard: %+v, %v", sh, err)
	}
	replica := sh.Replicas[0]
	if err := syscall.Kill(replica.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := func() { _ = syscall.Kill(replica.Pid(), syscall.SIGCONT) }
	t.Cleanup(cont)
	rec := oneRound(t, c, &Attack{Strategy: strategy.SQLAtomic, Product: "p"})
	cont()
	if rec.Err == "" || len(rec.Rounds) != 0 {
		t.Fatalf("the round: %+v, want an error before any kill", rec)
	}
	t.Logf("the round's error: %s", rec.Err)
	wantOwnPort(t, sh.Master)
	wantHealthy(t, c, "failed")
}

// TestClusterRoundStoppedAfterALongWait: a lua round waits for the
// master's next grant; none comes for longer than restoreBound
// (the row sold out, or its buyers are elsewhere), then the attack stops.
// The master must announce its own port again: the round's context,
// started with the round, is spent by then.
func TestClusterRoundStoppedAfterALongWait(t *testing.T) {
	c := ownCluster(t)
	sh, err := c.SlotShard(t.Context(), order.ProductKey("idle"))
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	armed, err := (&ClusterFailover{Enabled: true, Rounds: 1}).Arm(t.Context(),
		&Attack{Strategy: strategy.Lua, Product: "idle", Fleet: &fleet.Fleet{Cluster: c}, Stopped: stopped})
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(restoreBound()+time.Second, func() { close(stopped) }) // an attack that long
	rec, err := armed.Stop(t.Context(), nil)
	if f, _ := rec.(*Failover); err != nil || f == nil || len(f.Rounds) != 0 || f.Err != "" {
		t.Errorf("Stop = %+v, %v; want no round and no error", rec, err)
	}
	wantOwnPort(t, sh.Master)
	wantHealthy(t, c, "stopped")
}

// testRestoreWithin is restoreBound in the tests of rounds that fail: a
// third of failoverRestoreWithin, still several times what a promotion
// and a rejoin take (ClusterFailoverNodeTimeout and a second or two).
const testRestoreWithin = 10 * time.Second

// wantOwnPort fails t unless master announces its own port (0) again.
func wantOwnPort(t *testing.T, master *redisproc.Process) {
	t.Helper()
	port, err := master.Client.ConfigGet(t.Context(), "cluster-announce-port").Result()
	if err != nil || port["cluster-announce-port"] != "0" {
		t.Errorf("the master announces port %v (%v) after the round, want 0: its own", port, err)
	}
}

// wantHealthy fails t unless c is healthy again within 20 s of the round,
// which ended as what says ("failed", "stopped").
func wantHealthy(t *testing.T, c *redisproc.Cluster, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := c.AwaitHealthy(ctx); err != nil {
		t.Errorf("after the %s round the cluster stays broken: %v", what, err)
	}
}

// oneRound runs one round of a on c and returns its record.
func oneRound(t *testing.T, c *redisproc.Cluster, a *Attack) *Failover {
	t.Helper()
	stopped := make(chan struct{})
	a.Fleet, a.Stopped = &fleet.Fleet{Cluster: c}, stopped
	armed, err := (&ClusterFailover{Enabled: true, Rounds: 1}).Arm(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	close(stopped)
	rec, err := armed.Stop(t.Context(), nil)
	f, _ := rec.(*Failover)
	if err != nil || f == nil {
		t.Fatalf("Stop = %+v, %v", rec, err)
	}
	return f
}

// ownCluster starts a Redis Cluster of the test's own, with the
// failover's node timeout, and bounds the test's rounds' waits by
// testRestoreWithin: these rounds fail, and wait the bound out.
func ownCluster(t *testing.T) *redisproc.Cluster {
	t.Helper()
	restoreWithin.Store(int64(testRestoreWithin))
	t.Cleanup(func() { restoreWithin.Store(0) })
	if os.Getenv(testenv.EnvRequireRedisCluster) != "1" {
		testenv.SkipShort(t, "starts six redis-server processes")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := redisproc.StartCluster(ctx, redisproc.ClusterConfig{Dir: t.TempDir(), NodeTimeout: ClusterFailoverNodeTimeout})
	if errors.Is(err, redisproc.ErrMissingClusterBinaries) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
