package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// The five Redis nodes every benchmark in this package shares, so that each
// implementation is measured against the same servers in the same run.
var (
	addrs  []string
	nodes  []*redis.Client
	prefix string // unique per run, so a real server's other keys are never touched
	keySeq atomic.Int64
)

// nodeCount is the number of independent masters Redlock runs on; lua and
// redislock use the first one.
const nodeCount = 5

// TestMain starts five embedded miniredis servers, or connects to the five
// real ones named by FLASHSALE_BENCH_REDIS_ADDRS (or
// FLASHSALE_TEST_REDIS_ADDRS), runs the benchmarks and cleans up.
func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var real bool
	var err error
	addrs, real, err = nodeAddrs()
	if err != nil {
		return 0, err
	}
	if !real {
		for range nodeCount {
			s := miniredis.NewMiniRedis()
			// Without ClockTTL, miniredis TTLs never run down and an
			// abandoned lock would never expire.
			s.ClockTTL(true)
			if err := s.Start(); err != nil {
				return 0, fmt.Errorf("start miniredis: %w", err)
			}
			defer s.Close()
			addrs = append(addrs, s.Addr())
		}
	}
	nodes = newClients()
	defer closeClients(nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i, c := range nodes {
		if err := c.Ping(ctx).Err(); err != nil {
			return 0, fmt.Errorf("node %d (%s): %w", i, addrs[i], err)
		}
	}
	prefix = fmt.Sprintf("flashsale:bench:%d-%d:", os.Getpid(), time.Now().UnixNano())

	// A "key: value" line is a configuration label to benchstat, so the
	// results say which servers they were measured on.
	kind := "embedded miniredis"
	if real {
		kind = "real"
	}
	fmt.Printf("redis-nodes: %s %s\n", kind, strings.Join(addrs, ","))
	etcdKind, stopEtcd, err := startEtcd()
	if err != nil {
		return 0, fmt.Errorf("etcd: %w", err)
	}
	defer stopEtcd()
	fmt.Printf("etcd-members: %s %s\n", etcdKind, strings.Join(etcdEndpoints, ","))

	code := m.Run()
	if real {
		if err := deletePrefix(context.Background()); err != nil {
			return 0, err
		}
	}
	return code, nil
}

// nodeAddrs returns the five real node addresses from the environment, or
// real == false when none are configured.
func nodeAddrs() (addrs []string, real bool, err error) {
	for _, env := range []string{"FLASHSALE_BENCH_REDIS_ADDRS", "FLASHSALE_TEST_REDIS_ADDRS"} {
		v := strings.TrimSpace(os.Getenv(env))
		if v == "" {
			continue
		}
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				addrs = append(addrs, a)
			}
		}
		if len(addrs) != nodeCount {
			return nil, false, fmt.Errorf("%s lists %d addresses, want %d", env, len(addrs), nodeCount)
		}
		return addrs, true, nil
	}
	return nil, false, nil
}

// newClients returns a fresh client per node, with its own connection pool
// as another process would have: go-redis's defaults plus
// ContextTimeoutEnabled, which package dlock asks for so that a context
// deadline cuts a slow call short. Every implementation gets the same
// clients.
func newClients() []*redis.Client {
	cs := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		cs[i] = redis.NewClient(&redis.Options{Addr: a, ContextTimeoutEnabled: true})
	}
	return cs
}

func closeClients(cs []*redis.Client) {
	for _, c := range cs {
		_ = c.Close()
	}
}

// newKey returns a key no other benchmark or run uses.
func newKey(name string) string {
	return fmt.Sprintf("%s%s:%d", prefix, name, keySeq.Add(1))
}

// deletePrefix removes whatever this run left on the real nodes (nothing, if
// every lock was released): only keys under this run's prefix, never a flush.
func deletePrefix(ctx context.Context) error {
	for i, c := range nodes {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			if err := c.Del(ctx, iter.Val()).Err(); err != nil {
				return fmt.Errorf("node %d: delete %s: %w", i, iter.Val(), err)
			}
		}
		if err := iter.Err(); err != nil {
			return fmt.Errorf("node %d: scan: %w", i, err)
		}
	}
	return nil
}
