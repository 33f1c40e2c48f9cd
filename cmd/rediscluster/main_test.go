package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// TestRunPrintsAClusterCIUses checks the contract .ci/run relies on: stdout
// is exactly a REDIS_CLUSTER= line naming six nodes of one healthy cluster
// and a REDIS_CLUSTER_PIDS= line whose pids are those nodes, so that
// killing them stops the cluster.
func TestRunPrintsAClusterCIUses(t *testing.T) {
	required := os.Getenv(testenv.EnvRequireRedisCluster) == "1"
	if !required {
		testenv.SkipShort(t, "starts six redis-server processes; the full run has them")
	}
	var out bytes.Buffer
	err := run([]string{"-dir", t.TempDir()}, &out)
	if errors.Is(err, redisproc.ErrMissingClusterBinaries) && !required {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	vars := parseLines(t, out.String(), "REDIS_CLUSTER", "REDIS_CLUSTER_PIDS")
	pids := parsePids(t, vars["REDIS_CLUSTER_PIDS"])
	stopped := false
	t.Cleanup(func() {
		if !stopped { // never signal a pid again once its process is gone: it may be reused
			stopPids(t, pids)
		}
	})
	addrs := strings.Split(vars["REDIS_CLUSTER"], ",")
	if len(addrs) != redisproc.ClusterNodes || len(pids) != redisproc.ClusterNodes {
		t.Fatalf("%d addresses and %d pids, want %d of each:\n%s", len(addrs), len(pids), redisproc.ClusterNodes, out.String())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	var masters atomic.Int32 // ForEach* call back from a goroutine per node
	err = c.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error {
		info, err := n.ClusterInfo(ctx).Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return errors.New(n.Options().Addr + ": not cluster_state:ok")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("cluster state: %v", err)
	}
	err = c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { masters.Add(1); return nil })
	if got := masters.Load(); err != nil || got != redisproc.ClusterNodes/2 {
		t.Errorf("masters: %d (%v), want %d, each with a replica", got, err, redisproc.ClusterNodes/2)
	}
	// Keys over many slots land, and read back, through the printed nodes.
	for i := range 50 {
		k := "rediscluster-test:" + strconv.Itoa(i)
		if err := c.Set(ctx, k, i, time.Minute).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
		if got, err := c.Get(ctx, k).Int(); err != nil || got != i {
			t.Fatalf("GET %s: %d, %v, want %d", k, got, err, i)
		}
	}

	// The pids are the nodes: once they are stopped, no port answers.
	stopped = true
	stopPids(t, pids)
	for _, a := range addrs {
		testenv.WaitFor(t, 10*time.Second, a+" to refuse connections", func() bool {
			conn, err := net.DialTimeout("tcp", a, time.Second)
			if err == nil {
				conn.Close()
			}
			return err != nil
		})
	}
}

// TestRunWithoutDir: no cluster and nothing on stdout without -dir.
func TestRunWithoutDir(t *testing.T) {
	var out bytes.Buffer
	if err := run(nil, &out); err == nil || !strings.Contains(err.Error(), "-dir") {
		t.Errorf("run without -dir: %v, want an error naming -dir", err)
	}
	if out.Len() > 0 {
		t.Errorf("stdout: %q, want nothing", out.String())
	}
}

// parseLines reads stdout as .ci/run does (sed -n 's/^KEY=//p'), and
// fails t unless it is exactly one line for each of keys, none empty.
func parseLines(t *testing.T, stdout string, keys ...string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for line := range strings.Lines(stdout) {
		k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		if _, dup := vars[k]; !ok || dup {
			t.Fatalf("stdout line %q: want KEY=VALUE, once per key:\n%s", line, stdout)
		}
		vars[k] = v
	}
	for _, k := range keys {
		if vars[k] == "" {
			t.Fatalf("stdout: no %s= line:\n%s", k, stdout)
		}
	}
	if len(vars) != len(keys) {
		t.Fatalf("stdout: %d lines, want %d (%v):\n%s", len(vars), len(keys), keys, stdout)
	}
	return vars
}

// parsePids reads a comma-separated list of process ids.
func parsePids(t *testing.T, list string) []int {
	t.Helper()
	var pids []int
	for f := range strings.SplitSeq(list, ",") {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 1 {
			t.Fatalf("pid %q in %q: not a process id", f, list)
		}
		pids = append(pids, pid)
	}
	return pids
}

// stopPids stops the nodes by pid, as .ci/run does, and waits until they
// are gone (they are this process's children, reaped by redisproc).
func stopPids(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	for _, pid := range pids {
		testenv.WaitFor(t, 15*time.Second, "pid "+strconv.Itoa(pid)+" to exit", func() bool {
			return syscall.Kill(pid, 0) != nil
		})
	}
}
