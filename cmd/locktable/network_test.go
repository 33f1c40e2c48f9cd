package main

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/flashsale/flashsale/internal/netsim"
)

func TestRTTFlag(t *testing.T) {
	for _, c := range []struct {
		name, rtt string
		want      map[netsim.Link]time.Duration
	}{
		{"not given", "", map[netsim.Link]time.Duration{netsim.Redis: 0, netsim.DB: 0}},
		{"one for every link", "1ms", map[netsim.Link]time.Duration{netsim.DB: time.Millisecond, netsim.Redis: time.Millisecond,
			netsim.Etcd: time.Millisecond, netsim.ZooKeeper: time.Millisecond}},
		{"per link", "redis=0.5ms,etcd=2ms", map[netsim.Link]time.Duration{netsim.Redis: 500 * time.Microsecond,
			netsim.Etcd: 2 * time.Millisecond, netsim.DB: 0, netsim.ZooKeeper: 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"--redis", "127.0.0.1:1"}
			if c.rtt != "" {
				args = append(args, "--rtt", c.rtt)
			}
			cfg, err := parseFlags(args, nil)
			if err != nil {
				t.Fatal(err)
			}
			for l, want := range c.want {
				if got := cfg.rtt.Of(l); got != want {
					t.Errorf("--rtt %q: %s link %v, want %v", c.rtt, l, got, want)
				}
			}
		})
	}
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv("LOCKTABLE_RTT", "2ms")
		cfg, err := parseFlags([]string{"--redis", "127.0.0.1:1"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := cfg.rtt.Of(netsim.Redis), 2*time.Millisecond; got != want {
			t.Errorf("LOCKTABLE_RTT=2ms: redis link %v, want %v", got, want)
		}
	})
}

// With --rtt the measured clients reach their servers through the
// network: every command of the Redis client waits at least the RTT.
func TestRTTPutsTheNetworkBeforeRedis(t *testing.T) {
	const rtt = 20 * time.Millisecond
	mr := miniredis.RunT(t)
	cfg, err := parseFlags([]string{"--redis", mr.Addr(), "--rtt", "redis=20ms"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, b, err := openSystems(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	c := b.redis[0]
	if err := c.Ping(ctx).Err(); err != nil { // a pooled connection, made before the timing
		t.Fatal(err)
	}
	const commands = 3
	start := time.Now()
	for i := range commands {
		if err := c.Incr(ctx, cfg.prefix+"n").Err(); err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
	}
	if took, want := time.Since(start), commands*rtt; took < want {
		t.Errorf("%d commands with --rtt redis=%v took %v, want at least %v: the client is not behind the network", commands, rtt, took, want)
	}
	if got, ok := roundTrip(ctx, c); !ok || got < rtt {
		t.Errorf("roundTrip with --rtt redis=%v: %v (ok %v), want at least the rtt", rtt, got, ok)
	}
}
