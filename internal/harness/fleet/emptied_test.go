package fleet

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
)

// A restart of a node the fleet reaches through its proxy: every connection
// through the proxy drops, the node cannot be reached for the delay, and it
// comes back without the product's keys. The node itself is not flushed,
// and nobody else's connections are touched: on the real servers, other
// tests' keys and clients stay as they are.
func TestProxiedRestartDropsConnectionsAndTheProductsKeys(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		p, err := proxyNodes(r.DirectAddrs())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.close)
		product := r.Key("p1")
		keys := []string{order.ProductKey(product), order.ProductKey(product) + ":fence", order.ProductKey(product) + ":turns", order.ProductKey(product) + ":next",
			"flashsale:dedupe:{" + product + "}:{u1}"}
		other := r.Key("other")
		shop := NodeClient(p.proxyAddrs()[0], time.Second)
		defer shop.Close()
		direct := NodeClient(r.DirectAddrs()[0], time.Second)
		defer direct.Close()
		for _, k := range append(keys, other) {
			if err := shop.Set(ctx, k, "v", time.Minute).Err(); err != nil {
				t.Fatalf("SET %s through the proxy: %v", k, err)
			}
		}
		sub := shop.Subscribe(ctx, r.Key("ch"))
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatalf("subscribe through the proxy: %v", err)
		}

		restarted := make(chan error, 1)
		go func() { restarted <- p.Restart(ctx, []int{0}, 2*time.Second, product) }()
		if msg, err := sub.Receive(ctx); err == nil {
			t.Fatalf("pub/sub through the proxy after the restart: got %v, want its connection dropped", msg)
		}
		if err := shop.Ping(ctx).Err(); err == nil {
			t.Errorf("PING through the proxy while the node is down: got nil, want an error")
		}
		if err := <-restarted; err != nil {
			t.Fatalf("Restart: %v", err)
		}
		if err := p.Restart(ctx, []int{5}, 0, product); err == nil {
			t.Error("Restart of node 6 of 5: no error")
		}
		if !strings.Contains(p.Describe(), "proxies") {
			t.Errorf("Describe = %q", p.Describe())
		}
		for _, k := range keys {
			if err := shop.Get(ctx, k).Err(); err != redis.Nil {
				t.Errorf("GET %s after the restart: got %v, want redis.Nil (the product's keys are gone)", k, err)
			}
		}
		if got, err := direct.Get(ctx, other).Result(); err != nil || got != "v" {
			t.Errorf("GET %s, not the product's: got %q, %v; want it kept (no FLUSHALL)", other, got, err)
		}
	})
}

// An embedded node restarted empty drops its connections, stays down for
// the delay, and serves again on its address without its keys; a node
// that is not there is an error before anything goes down.
func TestCrashedNodes(t *testing.T) {
	r, err := embedded.StartRedis(RedisNodes)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := t.Context()
	c := NodeClient(r.Addrs()[0], time.Second)
	defer c.Close()
	c.Set(ctx, "k", "v", 0)
	k := &crashedNodes{r: r}
	if err := k.Restart(ctx, []int{0, 9}, 0, "p"); err == nil || !strings.Contains(err.Error(), "redis node 10: only 5 nodes") {
		t.Fatalf("Restart of node 10: %v", err)
	}
	if n, _ := c.Exists(ctx, "k").Result(); n != 1 {
		t.Fatal("a refused restart emptied a node")
	}
	start := time.Now()
	if err := k.Restart(ctx, []int{0}, 150*time.Millisecond, "p"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Errorf("back after %v, before the delay", took)
	}
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Errorf("k after the restart: %d, %v; want the node empty and answering", n, err)
	}
	if !strings.Contains(k.Describe(), "replaced on the same port by empty servers") {
		t.Errorf("Describe = %q", k.Describe())
	}
}

// The product's keys are every key with its hash tag, and the lock and
// its fence by name; Redis's glob characters in an id match themselves.
func TestProductKeys(t *testing.T) {
	r, err := embedded.StartRedis(1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := NodeClient(r.Addrs()[0], time.Second)
	defer c.Close()
	ctx := t.Context()
	for _, k := range []string{"flashsale:stock:{a?b}", "flashsale:dedupe:{a?b}:{u1}", "flashsale:stock:{axb}", "flashsale:stock:{a?b2}"} {
		c.Set(ctx, k, 1, 0)
	}
	keys, err := productKeys(ctx, c, "a?b")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	want := []string{"flashsale:dedupe:{a?b}:{u1}", order.ProductKey("a?b"), order.ProductKey("a?b") + ":fence", "flashsale:stock:{a?b}"}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("productKeys = %v, want %v", keys, want)
	}
	if got := globEscape(`a*b?[c]\d`); got != `a\*b\?\[c\]\\d` {
		t.Errorf("globEscape = %q", got)
	}
}

// The small helpers: node indexes checked, errors named, a pause that
// ends with its context.
func TestRestartHelpers(t *testing.T) {
	if err := checkNodes([]int{0, 4}, 5); err != nil {
		t.Errorf("checkNodes of nodes 1 and 5 of 5: %v", err)
	}
	if err := checkNodes([]int{-1}, 5); err == nil {
		t.Error("checkNodes of node 0: no error")
	}
	if wrapNodes(nil) != nil || !strings.HasPrefix(wrapNodes(errors.New("x")).Error(), "fleet: restarting redis nodes: x") {
		t.Error("wrapNodes")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	start := time.Now()
	pause(ctx, time.Hour)
	pause(t.Context(), -time.Second)
	if time.Since(start) > time.Second {
		t.Error("pause did not end with its context")
	}
	if err := withClient("127.0.0.1:1", func(c *redis.Client) error { return c.Ping(t.Context()).Err() }); err == nil || !strings.Contains(err.Error(), "redis node 127.0.0.1:1") {
		t.Errorf("withClient of a node that is not there: %v", err)
	}
}
