package testenv

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/redisopt"
)

// A Redis Cluster for the single-node roles (the shop's --redis-cluster):
// the cluster named by FLASHSALE_TEST_REDIS_CLUSTER, shared with the other
// test packages, each test's keys under its own prefix. There is no
// embedded one: miniredis has no cluster mode, and a cluster's lesson is
// what one process cannot show (keys spread over masters by slot, a script
// refused when its keys cross slots, a replica promoted).

// Environment variables of the Redis Cluster: its nodes, and whether a
// test that needs it fails rather than skips where it is not named (.ci/run
// sets it, after starting one).
const (
	EnvRedisCluster        = "FLASHSALE_TEST_REDIS_CLUSTER"
	EnvRequireRedisCluster = "FLASHSALE_TEST_REQUIRE_REDIS_CLUSTER"
)

// RedisCluster is one test's view of the Redis Cluster: its nodes, fresh
// cluster clients, and the test's key prefix, whose keys are deleted from
// every master at cleanup. Its methods are safe for concurrent use.
type RedisCluster struct {
	tb    testing.TB
	addrs []string
	id    string // the token in every key of the test, as RedisNodes's

	mu      sync.Mutex
	clients []*redis.ClusterClient
}

// Cluster runs fn as the subtest "cluster" with an Env whose single-node
// roles go to the Redis Cluster of FLASHSALE_TEST_REDIS_CLUSTER
// (Env.Cluster): beside it the real database and Redis nodes (redlock's)
// when both are named, else embedded ones. Where no cluster is named the
// subtest is skipped, or fails with FLASHSALE_TEST_REQUIRE_REDIS_CLUSTER=1.
func Cluster(t *testing.T, fn func(t *testing.T, b *Env)) {
	t.Helper()
	t.Run("cluster", func(t *testing.T) {
		if len(clusterAddrs(t)) == 0 {
			return // skipped or failed by clusterAddrs
		}
		m := Embedded
		if len(EnvModes(t)) > 1 {
			m = Real
		}
		b := NewEnv(t, m)
		b.Cluster = newRedisCluster(t, b.Redis.id)
		fn(t, b)
	})
}

// NewRedisCluster gives tb the Redis Cluster with a key prefix of its own,
// cleaned up when tb ends; it skips tb (fails it, with
// FLASHSALE_TEST_REQUIRE_REDIS_CLUSTER=1) where no cluster is named, and
// fails it if no node answers.
func NewRedisCluster(tb testing.TB) *RedisCluster {
	tb.Helper()
	if len(clusterAddrs(tb)) == 0 {
		return nil // not reached: skipped or failed
	}
	return newRedisCluster(tb, "t"+randomID(5))
}

// clusterAddrs parses FLASHSALE_TEST_REDIS_CLUSTER, skipping tb (failing
// it when required) where it is unset, failing it where malformed.
func clusterAddrs(tb testing.TB) []string {
	tb.Helper()
	raw := strings.TrimSpace(os.Getenv(EnvRedisCluster))
	if raw == "" {
		if os.Getenv(EnvRequireRedisCluster) == "1" {
			tb.Fatalf("testenv: %s=1 but %s names no Redis Cluster", EnvRequireRedisCluster, EnvRedisCluster)
		}
		tb.Skipf("testenv: %s names no Redis Cluster (go run ./cmd/rediscluster -dir DIR starts one)", EnvRedisCluster)
		return nil
	}
	var addrs []string
	for _, a := range strings.Split(raw, ",") {
		a = strings.TrimSpace(a)
		if host, port, err := net.SplitHostPort(a); err != nil || host == "" || port == "" {
			tb.Fatalf("%s=%q: %q is not host:port", EnvRedisCluster, raw, a)
		}
		addrs = append(addrs, a)
	}
	return addrs
}

func newRedisCluster(tb testing.TB, id string) *RedisCluster {
	tb.Helper()
	c := &RedisCluster{tb: tb, addrs: clusterAddrs(tb), id: id}
	tb.Cleanup(c.cleanup)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Client().ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() }); err != nil {
		tb.Fatalf("testenv: %s (%s): a master does not answer: %v", EnvRedisCluster, strings.Join(c.addrs, ","), err)
	}
	return c
}

// Addrs returns the cluster's nodes as named, for a shop's --redis-cluster.
func (c *RedisCluster) Addrs() []string { return append([]string(nil), c.addrs...) }

// Key returns name with the test's prefix, as RedisNodes.Key does (the
// same prefix in an Env): deleted from every master at cleanup.
func (c *RedisCluster) Key(name string) string { return c.id + ":" + name }

// Client returns a new cluster client, like another process would have,
// closed at cleanup. It never resends a command (MaxRedirects -1, as the
// shop's): a test sees every fault and every refusal, CROSSSLOT included.
func (c *RedisCluster) Client() *redis.ClusterClient {
	cl := redis.NewClusterClient(redisopt.Cluster(c.addrs, time.Second,
		redisopt.Settings{PoolSize: 64, DialTimeout: time.Second}))
	c.mu.Lock()
	c.clients = append(c.clients, cl)
	c.mu.Unlock()
	return cl
}

// Keys returns this test's keys on every master, asking each with SCAN.
// An error fails the test; call it from the test's goroutine.
func (c *RedisCluster) Keys() []string {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	var keys []string
	err := c.Client().ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		found, err := scanKeys(ctx, m, "*"+c.id+"*")
		mu.Lock()
		keys = append(keys, found...)
		mu.Unlock()
		return err
	})
	if err != nil {
		c.tb.Fatalf("testenv: keys on the cluster: %v", err)
	}
	return keys
}

// cleanup deletes the test's keys from every master, then closes the
// clients.
func (c *RedisCluster) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := c.Client()
	err := cl.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		keys, err := scanKeys(ctx, m, "*"+c.id+"*")
		if err != nil || len(keys) == 0 {
			return err
		}
		// One DEL each: a DEL of keys in several slots is refused.
		_, err = m.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Del(ctx, k)
			}
			return nil
		})
		return err
	})
	if err != nil {
		c.tb.Errorf("testenv: clean up keys *%s* on the cluster: %v", c.id, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.clients {
		cl.Close()
	}
	c.clients = nil
}
