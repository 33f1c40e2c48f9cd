package redisproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The cluster's own view, read through the package's helpers, matches
// what it started: every key's slot is served by the master SlotShard
// names (which takes the write; every other master answers MOVED), the
// shards spread the keys over all three masters, and Addrs, Pids and
// Processes agree. Close stops every node, and a second Close does
// nothing.
func TestClusterShardsAndClose(t *testing.T) {
	c := startCluster(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	masters := map[string]bool{}
	for i := range 30 {
		key := fmt.Sprintf("{p%d}k", i)
		sh, err := c.SlotShard(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(sh.Replicas) != 1 || sh.Replicas[0] == sh.Master {
			t.Fatalf("%s: master %s with replicas %v, want one other", key, sh.Master.Addr, sh.Replicas)
		}
		masters[sh.Master.Addr] = true
		if err := sh.Master.Client.Set(ctx, key, "v", 0).Err(); err != nil {
			t.Fatalf("%s on the master SlotShard names (%s): %v", key, sh.Master.Addr, err)
		}
		for _, p := range c.Processes() {
			if p == sh.Master || p == sh.Replicas[0] {
				continue
			}
			if err := p.Client.Set(ctx, key, "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
				t.Fatalf("%s on %s, which SlotShard does not name: %v, want MOVED", key, p.Addr, err)
			}
		}
	}
	if len(masters) != ClusterMasters {
		t.Errorf("30 keys landed on %d masters, want all %d", len(masters), ClusterMasters)
	}

	addrs, pids, procs := c.Addrs(), c.Pids(), c.Processes()
	if len(addrs) != ClusterNodes || len(pids) != ClusterNodes || len(procs) != ClusterNodes {
		t.Fatalf("%d addrs, %d pids, %d processes; want %d each", len(addrs), len(pids), len(procs), ClusterNodes)
	}
	for i, p := range procs {
		if p.Addr != addrs[i] || p.Pid() != pids[i] {
			t.Errorf("node %d: process %s pid %d, Addrs %s Pids %d", i, p.Addr, p.Pid(), addrs[i], pids[i])
		}
	}
	c.Close()
	for i, p := range procs {
		select {
		case <-p.Exited():
		default:
			t.Errorf("node %d (%s) still runs after Close", i, p.Addr)
		}
		if err := syscall.Kill(pids[i], 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d after Close: kill -0 = %v, want ESRCH", pids[i], err)
		}
	}
	c.Close() // again: nothing left to stop
}

// A replica that dies makes the cluster unhealthy, and AwaitHealthy says
// so, naming what it saw, when ctx ends; once the replica rejoins, the
// cluster is healthy again.
func TestClusterHealthSeesADeadReplica(t *testing.T) {
	c := startCluster(t, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sh, err := c.SlotShard(ctx, "{p}k")
	if err != nil {
		t.Fatal(err)
	}
	replica := sh.Replicas[0]
	c.Kill(replica)
	short, cancelShort := context.WithTimeout(ctx, 3*time.Second) // the node timeout, and some
	err = c.AwaitHealthy(short)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last:") {
		t.Fatalf("AwaitHealthy with a replica dead: %v, want the deadline and the last thing seen", err)
	}
	if err := c.Rejoin(ctx, replica); err != nil {
		t.Fatal(err)
	}
	if err := c.AwaitHealthy(ctx); err != nil {
		t.Fatalf("after the rejoin: %v", err)
	}
}

// A node that cannot bind its port fails StartCluster, and the nodes that
// did start are stopped again: nothing is left listening.
func TestStartClusterLeavesNothingOnError(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts redis-server processes")
	}
	if _, _, err := clusterBinaries(); err != nil {
		t.Skip(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	first := taken.Addr().(*net.TCPAddr).Port
	if first+ClusterNodes+10000 > 65535 {
		t.Skipf("port %d: the bus ports would not fit", first)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := StartCluster(ctx, ClusterConfig{Dir: t.TempDir(), FirstPort: first})
	if err == nil {
		c.Close()
		t.Fatalf("StartCluster on a taken port %d: no error", first)
	}
	for port := first + 1; port < first+ClusterNodes; port++ {
		if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			conn.Close()
			t.Errorf("port %d still answers after StartCluster failed: %v", port, err)
		}
	}
}
