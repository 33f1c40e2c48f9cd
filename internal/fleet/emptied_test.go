package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/testenv"
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
