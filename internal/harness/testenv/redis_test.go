package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestRedisNodesAreIndependent(t *testing.T) {
	Redis(t, func(t *testing.T, r *RedisNodes) {
		ctx := context.Background()
		cs := r.Clients()
		if got, want := len(cs), RedisNodeCount; got != want {
			t.Fatalf("clients: got %d, want %d", got, want)
		}
		key := r.Key("only-on-2")
		if err := cs[2].Set(ctx, key, "v", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		for i := range cs {
			got := r.Keys(i, r.Key("*"))
			want := 0
			if i == 2 {
				want = 1
			}
			if len(got) != want {
				t.Errorf("node %d keys: got %v, want %d key(s)", i, got, want)
			}
		}
	})
}

func TestRedisKeyPrefixIsPerTest(t *testing.T) {
	Redis(t, func(t *testing.T, r *RedisNodes) {
		var other *RedisNodes
		t.Run("other", func(t *testing.T) { other = NewRedis(t, r.Mode()) })
		if r.Key("x") == other.Key("x") {
			t.Fatalf("two tests got the same key %q", r.Key("x"))
		}
		if !strings.HasPrefix(r.Key("x"), r.Prefix()) {
			t.Errorf("Key(x) = %q, want prefix %q", r.Key("x"), r.Prefix())
		}
	})
}

func TestRedisStopStart(t *testing.T) {
	Redis(t, func(t *testing.T, r *RedisNodes) {
		ctx := context.Background()
		c := r.Clients()[1]
		key := r.Key("k")
		if err := c.Set(ctx, key, "v", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		r.Stop(1)
		start := time.Now()
		if err := c.Get(ctx, key).Err(); err == nil {
			t.Fatalf("GET on a stopped node: got no error, want one")
		}
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("GET on a stopped node failed after %v, want fast", took)
		}
		if err := r.Clients()[0].Ping(ctx).Err(); err != nil {
			t.Errorf("node 0 while node 1 is down: %v", err)
		}
		r.Start(1)
		got, err := c.Get(ctx, key).Result()
		if err != nil || got != "v" {
			t.Fatalf("GET after Start: got %q, %v; want %q, nil (data kept)", got, err, "v")
		}
	})
}

func TestRedisDelay(t *testing.T) {
	Redis(t, func(t *testing.T, r *RedisNodes) {
		ctx := context.Background()
		c := r.Clients()[3]
		if err := c.Ping(ctx).Err(); err != nil { // connect first
			t.Fatal(err)
		}
		r.SetDelay(3, 50*time.Millisecond)
		start := time.Now()
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 100*time.Millisecond {
			t.Errorf("PING on a slow node took %v, want at least 100ms", took)
		}
	})
}

// TestRedisTTLRunsDown checks the embedded nodes' ClockTTL: a key with a
// short TTL must disappear on the wall clock, as on a real Redis.
func TestRedisTTLRunsDown(t *testing.T) {
	Redis(t, func(t *testing.T, r *RedisNodes) {
		ctx := context.Background()
		c := r.Clients()[0]
		key := r.Key("ttl")
		if err := c.Set(ctx, key, "v", 50*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond)
		if err := c.Get(ctx, key).Err(); err != redis.Nil {
			t.Fatalf("GET after the TTL: got %v, want redis.Nil", err)
		}
	})
}

// TestRedisCleanupDeletesKeys checks that a finished test leaves none of its
// keys behind, including keys that merely contain its token.
func TestRedisCleanupDeletesKeys(t *testing.T) {
	Redis(t, func(t *testing.T, r *RedisNodes) {
		if r.Mode() != Real {
			t.Skip("embedded nodes are discarded whole")
		}
		var inner *RedisNodes
		t.Run("writer", func(t *testing.T) {
			inner = NewRedis(t, Real)
			ctx := context.Background()
			c := inner.Clients()[0]
			for _, k := range []string{inner.Key("a"), "flashsale:lock:{" + inner.Key("p") + "}"} {
				if err := c.Set(ctx, k, "v", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
		})
		if got := r.Keys(0, "*"+strings.TrimSuffix(inner.Prefix(), ":")+"*"); len(got) != 0 {
			t.Fatalf("keys left after cleanup: %v", got)
		}
	})
}
