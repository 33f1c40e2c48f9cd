package redisproc

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/faultproxy"
)

// startCluster starts a Cluster for t with nodeTimeout, skipping t where
// the binaries are missing unless FLASHSALE_TEST_REQUIRE_REDIS_CLUSTER is
// 1 (as testenv does; this package cannot import it), and under -short
// unless that variable is 1. It closes the cluster at cleanup.
func startCluster(t *testing.T, nodeTimeout time.Duration) *Cluster {
	t.Helper()
	required := os.Getenv("FLASHSALE_TEST_REQUIRE_REDIS_CLUSTER") == "1"
	if testing.Short() && !required {
		t.Skip("-short: starts six redis-server processes; the full run has them")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	c, err := StartCluster(ctx, ClusterConfig{Dir: t.TempDir(), NodeTimeout: nodeTimeout})
	if errors.Is(err, ErrMissingClusterBinaries) && !required {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster of %d nodes up in %v", ClusterNodes, time.Since(start).Round(time.Millisecond))
	t.Cleanup(c.Close)
	return c
}

// isPsync picks a replica's replication connection out of a proxy's.
func isPsync(b []byte) bool { return bytes.Contains(bytes.ToUpper(b), []byte("PSYNC")) }

// A write the held link kept from the replica of a key's master is lost
// when that master dies and the cluster promotes the replica; clients that
// reach the master through the same proxy are not held; the old master
// rejoins as the new one's replica.
func TestClusterFailsOverAndRejoins(t *testing.T) {
	c := startCluster(t, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sh, err := c.SlotShard(ctx, "{p}k")
	if err != nil {
		t.Fatal(err)
	}
	if len(sh.Replicas) != 1 {
		t.Fatalf("shard of {p}k: master %s, replicas %d, want 1", sh.Master.Addr, len(sh.Replicas))
	}
	master, replica := sh.Master, sh.Replicas[0]
	link, err := faultproxy.New(master.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	link.HoldOnly(isPsync)
	port := mustPort(t, link.Addr())
	if err := c.Announce(ctx, master, port); err != nil {
		t.Fatal(err)
	}
	if err := await(ctx, "the replica to follow the link", func(ctx context.Context) (bool, string) {
		return c.Follows(ctx, replica, port), "not yet"
	}); err != nil {
		t.Fatal(err)
	}
	link.Hold()
	if err := master.Client.Set(ctx, "{p}k", "lost", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// A client through the proxy is not held: only the replica's link is.
	through := newClient(link.Addr())
	defer through.Close()
	if got, err := through.Get(ctx, "{p}k").Result(); err != nil || got != "lost" {
		t.Fatalf("get through the held proxy: %q, %v; want lost, at once", got, err)
	}
	m, r, err := c.Offsets(ctx, master, replica)
	if err != nil || m <= r {
		t.Fatalf("offsets master %d, replica %d (%v): want the replica behind", m, r, err)
	}
	c.Kill(master)
	link.Stop()
	killed := time.Now()
	if err := c.AwaitMaster(ctx, replica); err != nil {
		t.Fatal(err)
	}
	t.Logf("promoted %v after the kill, %d bytes behind", time.Since(killed).Round(time.Millisecond), m-r)
	if n, _ := replica.Client.Exists(ctx, "{p}k").Result(); n != 0 {
		t.Errorf("the promoted replica has {p}k, want it lost behind the held link")
	}
	if err := c.Rejoin(ctx, master); err != nil {
		t.Fatal(err)
	}
	sh, err = c.SlotShard(ctx, "{p}k")
	if err != nil || sh.Master != replica || len(sh.Replicas) != 1 || sh.Replicas[0].Addr != master.Addr {
		t.Fatalf("after the rejoin: shard %+v (%v), want %s the master and %s its replica", sh, err, replica.Addr, master.Addr)
	}
}

// The cluster is up, the way the tests and the load generator use it:
// every node answers, and a key's slot has a master and a replica.
func TestClusterStarts(t *testing.T) {
	c := startCluster(t, 0)
	if got := len(c.Addrs()); got != ClusterNodes {
		t.Fatalf("addrs: %d, want %d", got, ClusterNodes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := c.Processes()[0].Client.ClusterInfo(ctx).Result()
	if err != nil || !strings.Contains(info, "cluster_state:ok") {
		t.Fatalf("cluster info: %v, %q", err, info)
	}
}

func mustPort(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	if err != nil || n == 0 {
		t.Fatalf("%q: no port", addr)
	}
	return n
}

func newClient(addr string) *redis.Client { return redis.NewClient(ClientOptions(addr)) }
