package embedded_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/embedded"
)

func startRedis(t *testing.T) *embedded.Redis {
	t.Helper()
	r, err := embedded.StartRedis(5)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func client(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DialerRetries: 1, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestStartRedis(t *testing.T) {
	r := startRedis(t)
	addrs := r.Addrs()
	if got, want := len(addrs), 5; got != want {
		t.Fatalf("nodes: got %d, want %d", got, want)
	}
	seen := map[string]bool{}
	for i, a := range addrs {
		if seen[a] {
			t.Errorf("node %d shares address %s", i, a)
		}
		seen[a] = true
		if err := client(t, a).Ping(context.Background()).Err(); err != nil {
			t.Errorf("node %d PING: %v", i, err)
		}
	}
	if _, err := embedded.StartRedis(0); err == nil {
		t.Errorf("StartRedis(0): got nil, want an error")
	}
}

// TestTTLRunsOnWallClock is the reason for ClockTTL(true): without it the
// key below would live forever and a naive lock would never expire.
func TestTTLRunsOnWallClock(t *testing.T) {
	r := startRedis(t)
	c := client(t, r.Addrs()[0])
	ctx := context.Background()
	if err := c.Set(ctx, "lock", "1", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond)
	if err := c.Get(ctx, "lock").Err(); err != redis.Nil {
		t.Fatalf("GET after TTL: got %v, want redis.Nil", err)
	}
}

func TestStopRestart(t *testing.T) {
	r := startRedis(t)
	addr := r.Addrs()[2]
	c := client(t, addr)
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	r.Stop(2)
	if err := c.Get(ctx, "k").Err(); err == nil {
		t.Fatalf("GET on a stopped node: got nil, want an error")
	}
	if err := client(t, r.Addrs()[1]).Ping(ctx).Err(); err != nil {
		t.Errorf("node 1 while node 2 is down: %v", err)
	}
	if err := r.Restart(2); err != nil {
		t.Fatal(err)
	}
	if err := r.Restart(2); err == nil {
		t.Errorf("Restart of a running node: got nil, want an error")
	}
	if got := r.Addrs()[2]; got != addr {
		t.Errorf("address after Restart: got %s, want %s", got, addr)
	}
	got, err := c.Get(ctx, "k").Result()
	if err != nil || got != "v" {
		t.Fatalf("GET after Restart: got %q, %v; want %q, nil", got, err, "v")
	}
}

// Stop, Restart and Close may race: whatever the order, a node ends either
// running or stopped, never both, and Close leaves nothing behind; run
// under -race, it also checks that they guard the node they read and close.
func TestStopRestartConcurrently(t *testing.T) {
	for range 10 {
		r, err := embedded.StartRedis(1)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Go(func() {
				for i := range 20 {
					if (g+i)%2 == 0 {
						r.Stop(0)
					} else {
						_ = r.Restart(0) // "still running" or "closed" are fine
					}
				}
			})
		}
		wg.Wait()
		r.Close()
		if c, err := net.Dial("tcp", r.Addrs()[0]); err == nil {
			c.Close()
			t.Fatalf("node still answers on %s after Close", r.Addrs()[0])
		}
	}
}

// A crashed node comes back on its address with nothing: no keys, and its
// clients' connections were dropped, as a Redis without persistence whose
// process died and was started again.
func TestCrashRestartsEmpty(t *testing.T) {
	r := startRedis(t)
	addr := r.Addrs()[3]
	c := client(t, addr)
	ctx := context.Background()
	if err := c.Set(ctx, "lock", "holder-a", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	r.Crash(3)
	if err := c.Get(ctx, "lock").Err(); err == nil || err == redis.Nil {
		t.Fatalf("GET on a crashed node: got %v, want a connection error", err)
	}
	if err := r.Restart(3); err != nil {
		t.Fatal(err)
	}
	if got := r.Addrs()[3]; got != addr {
		t.Errorf("address after Crash and Restart: got %s, want %s", got, addr)
	}
	if err := c.Get(ctx, "lock").Err(); err != redis.Nil {
		t.Fatalf("GET after Crash and Restart: got %v, want redis.Nil (the node comes back empty)", err)
	}
	if err := c.Set(ctx, "lock", "holder-b", time.Minute).Err(); err != nil {
		t.Fatalf("SET on the restarted node: %v", err)
	}
	if got, _ := r.Node(3).Get("lock"); got != "holder-b" {
		t.Errorf("Node(3) after Crash: got %q, want the new server's %q", got, "holder-b")
	}
}
