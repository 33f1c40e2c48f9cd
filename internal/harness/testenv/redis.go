package testenv

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/redisopt"
)

// Redis runs fn as the subtest "embedded", on five fresh miniredis nodes,
// and, when FLASHSALE_TEST_REDIS_ADDRS lists five addresses, as the subtest
// "real" on those servers. Each subtest gets its own RedisNodes with its own
// proxies and key prefix, cleaned up when it ends. A malformed
// FLASHSALE_TEST_REDIS_ADDRS, or a real node that does not answer, fails t.
func Redis(t *testing.T, fn func(t *testing.T, r *RedisNodes)) {
	t.Helper()
	for _, m := range RedisModes(t) {
		t.Run(string(m), func(t *testing.T) { fn(t, NewRedis(t, m)) })
	}
}

// RedisNodes is one test's view of five independent Redis masters, each
// reached through its own Proxy. Its methods are safe for concurrent use,
// except that those which fail the test (Start, Keys) must be called from
// the test's goroutine.
type RedisNodes struct {
	tb     testing.TB
	mode   Mode
	id     string // unique token inside every key of this test
	direct []string
	prox   []*Proxy
	mini   *embedded.Redis // nil in Real mode

	mu      sync.Mutex
	clients []*redis.Client
	directs []*redis.Client // to the servers themselves, bypassing the proxies
}

// NewRedis gives tb five Redis nodes in mode m, cleaned up when tb ends:
// Embedded starts five miniredis servers; Real uses the servers of
// FLASHSALE_TEST_REDIS_ADDRS, after checking that each answers PING (tb
// fails if one does not, or if the variable is unset or malformed). Use it
// where Redis does not fit, for example in benchmarks.
func NewRedis(tb testing.TB, m Mode) *RedisNodes {
	tb.Helper()
	r := &RedisNodes{tb: tb, mode: m, id: "t" + randomID(5)}
	switch m {
	case Embedded:
		mini, err := embedded.StartRedis(RedisNodeCount)
		if err != nil {
			tb.Fatalf("testenv: %v", err)
		}
		r.mini = mini
		r.direct = mini.Addrs()
	case Real:
		addrs, ok := realRedisAddrs(tb)
		if !ok {
			tb.Fatalf("testenv: real Redis needs %s (five host:port, comma-separated)", EnvRedisAddrs)
		}
		r.direct = addrs
	default:
		tb.Fatalf("testenv: unknown mode %q", m)
	}
	tb.Cleanup(r.cleanup)
	if m == Real {
		r.pingDirect()
	}
	for i, addr := range r.direct {
		p, err := NewProxy(addr)
		if err != nil {
			tb.Fatalf("testenv: redis node %d: %v", i, err)
		}
		r.prox = append(r.prox, p)
	}
	return r
}

// Mode returns the mode these nodes run in.
func (r *RedisNodes) Mode() Mode { return r.mode }

// Len returns the number of nodes (always five).
func (r *RedisNodes) Len() int { return len(r.direct) }

// Clients returns a new client per node, connected through the proxies, so
// the faults injected with Stop and SetDelay reach them. Each call returns a
// fresh set, like another process would have; all are closed at cleanup.
// The clients do not retry failed commands (MaxRetries -1) nor dials
// (DialerRetries 1), so a test sees every fault at once; they dial with a
// one-second timeout and pool up to 64 connections each.
func (r *RedisNodes) Clients() []*redis.Client {
	var cs []*redis.Client
	for _, p := range r.prox {
		cs = append(cs, redis.NewClient(clientOptions(p.Addr())))
	}
	r.mu.Lock()
	r.clients = append(r.clients, cs...)
	r.mu.Unlock()
	return cs
}

// Addrs returns the proxies' addresses, for code that builds its own
// clients (a shop instance). Faults injected with Stop and SetDelay apply.
func (r *RedisNodes) Addrs() []string {
	var a []string
	for _, p := range r.prox {
		a = append(a, p.Addr())
	}
	return a
}

// DirectAddrs returns the servers' own addresses, bypassing the proxies:
// faults do not reach clients built on them. For benchmarks, which should
// not pay for the proxy hop.
func (r *RedisNodes) DirectAddrs() []string { return append([]string(nil), r.direct...) }

// Prefix returns this test's unique key prefix, "t<10 hex digits>:".
func (r *RedisNodes) Prefix() string { return r.id + ":" }

// Key returns name with this test's unique prefix. On real servers, which
// are shared with other tests, every key containing the prefix's token
// anywhere is deleted at cleanup, so derive ids from Key too (a product id
// Key("p1") makes the shop's lock key flashsale:lock:{t…:p1}, which is
// cleaned up as well). The result is at most 12 bytes longer than name and
// uses only [A-Za-z0-9:] besides name.
func (r *RedisNodes) Key(name string) string { return r.id + ":" + name }

// Stop takes node i down: the proxy cuts every connection and refuses new
// ones; in Embedded mode the miniredis server itself is closed too. Data is
// kept. It panics if i is out of range.
func (r *RedisNodes) Stop(i int) {
	r.prox[i].Stop()
	if r.mini != nil {
		r.mini.Stop(i)
	}
}

// Start brings node i back on the same address. It fails the test if the
// node cannot be restarted; call it from the test's goroutine.
func (r *RedisNodes) Start(i int) {
	r.tb.Helper()
	if r.mini != nil && r.mini.Node(i).Server() == nil {
		if err := r.mini.Restart(i); err != nil {
			r.tb.Fatalf("testenv: %v", err)
		}
	}
	if err := r.prox[i].Start(); err != nil {
		r.tb.Fatalf("testenv: redis node %d: %v", i, err)
	}
}

// SetDelay makes node i slow: every chunk through its proxy waits d each
// way (a round trip gets about 2·d slower). Zero removes the delay.
func (r *RedisNodes) SetDelay(i int, d time.Duration) { r.prox[i].SetDelay(d) }

// Keys returns the keys on node i matching the Redis glob pattern, sorted,
// asking the server directly (not through the proxy). Pass
// r.Key("*") for this test's keys. The node must be running; an error fails
// the test, so call it from the test's goroutine.
func (r *RedisNodes) Keys(i int, pattern string) []string {
	r.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := scanKeys(ctx, r.directClient(i), pattern)
	if err != nil {
		r.tb.Fatalf("testenv: keys %q on redis node %d (%s): %v", pattern, i, r.direct[i], err)
	}
	sort.Strings(keys)
	return keys
}

// Embedded returns the in-process servers in Embedded mode (to move a
// node's clock, for instance) and nil in Real mode.
func (r *RedisNodes) Embedded() *embedded.Redis { return r.mini }

func (r *RedisNodes) directClient(i int) *redis.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.directs == nil {
		r.directs = make([]*redis.Client, len(r.direct))
	}
	if r.directs[i] == nil {
		r.directs[i] = redis.NewClient(clientOptions(r.direct[i]))
	}
	return r.directs[i]
}

// pingDirect fails the test if a real node does not answer.
func (r *RedisNodes) pingDirect() {
	r.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for i, addr := range r.direct {
		if err := r.directClient(i).Ping(ctx).Err(); err != nil {
			r.tb.Fatalf("testenv: %s node %d (%s) does not answer PING: %v", EnvRedisAddrs, i, addr, err)
		}
	}
}

// cleanup closes the clients and proxies, deletes this test's keys from real
// servers, and stops embedded ones.
func (r *RedisNodes) cleanup() {
	r.mu.Lock()
	clients := r.clients
	r.clients = nil
	r.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
	for _, p := range r.prox {
		p.Close()
	}
	if r.mode == Real {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for i := range r.direct {
			if err := deleteKeys(ctx, r.directClient(i), "*"+r.id+"*"); err != nil {
				r.tb.Errorf("testenv: clean up keys *%s* on redis node %d (%s): %v", r.id, i, r.direct[i], err)
			}
		}
	}
	r.mu.Lock()
	for _, c := range r.directs {
		if c != nil {
			c.Close()
		}
	}
	r.directs = nil
	r.mu.Unlock()
	if r.mini != nil {
		r.mini.Close()
	}
}

func clientOptions(addr string) *redis.Options {
	return redisopt.Client(addr, redisopt.Settings{PoolSize: 64, DialTimeout: time.Second})
}

// scanKeys lists keys with SCAN (never KEYS, which blocks a shared server).
func scanKeys(ctx context.Context, c *redis.Client, pattern string) ([]string, error) {
	var keys []string
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	return keys, iter.Err()
}

func deleteKeys(ctx context.Context, c *redis.Client, pattern string) error {
	keys, err := scanKeys(ctx, c, pattern)
	if err != nil || len(keys) == 0 {
		return err
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := c.Del(ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}
