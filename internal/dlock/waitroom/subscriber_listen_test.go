package waitroom_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock/waitroom"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// confirms records which keys each node confirmed, in order.
type confirms struct {
	mu   sync.Mutex
	keys map[int][]string
}

func (c *confirms) confirm(node int, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys[node] = append(c.keys[node], key)
}

func (c *confirms) has(node int, key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.keys[node], key)
}

// subscribers is how many connections node c holds subscribed to key's
// channel (each test's keys are its own, so this subscriber's).
func subscribers(c redis.UniversalClient, key string) int64 {
	n, err := c.PubSubNumSub(context.Background(), waitroom.Channel(key)).Result()
	if err != nil {
		return -1
	}
	return n[waitroom.Channel(key)]
}

// awaitSubscribers waits until every node has want subscribers on key.
func awaitSubscribers(t *testing.T, clients []redis.UniversalClient, key string, want int64) {
	t.Helper()
	for i, c := range clients {
		testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("%d subscribers to %s on node %d", want, key, i), func() bool {
			return subscribers(c, key) == want
		})
	}
}

// TestListenInOrder: Listen and Stop made on a running subscriber take
// effect on every node in the order they were made, however fast they
// come: the last call wins. Each confirmation names the key, not the
// channel.
func TestListenInOrder(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		clients := universal(r.Clients()[:2])
		c := &confirms{keys: map[int][]string{}}
		h := &heard{confirmed: map[int]int{}, gaps: map[int]int{}}
		s := waitroom.NewSubscriber(clients, h.message, c.confirm, h.gap)
		base, on, off := r.Key("base"), r.Key("on"), r.Key("off")
		s.Listen(base)
		s.Start()
		defer s.Close()
		awaitSubscribers(t, clients, base, 1)

		for range 50 {
			s.Listen(on)
			s.Stop(on)
			s.Listen(off)
			s.Stop(off)
		}
		s.Listen(on)
		awaitSubscribers(t, clients, on, 1)
		awaitSubscribers(t, clients, off, 0)
		for node := range clients {
			if !c.has(node, on) || !c.has(node, base) {
				t.Errorf("node %d confirmed %q, want %s and %s among them", node, c.keys[node], base, on)
			}
		}
		// NUMSUB may have been 1 between a round's SUBSCRIBE and its
		// UNSUBSCRIBE, the last SUBSCRIBE still to come: an announcement
		// sent then is lost, as it may be in a sale (waiters fall back on
		// their timers). So announce until one is heard: never, if the
		// key listened to last were not subscribed in the end.
		testenv.WaitFor(t, 5*time.Second, "the announcement on the key listened to last", func() bool {
			if err := clients[1].Publish(context.Background(), waitroom.Channel(on), "t1").Err(); err != nil {
				t.Fatal(err)
			}
			return h.has(on + "=t1")
		})
	})
}

// TestChangesWhileNodeDown: what is listened to and stopped while a node
// is unreachable is what its new connection subscribes to: every key
// listened to then, and none stopped.
func TestChangesWhileNodeDown(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		clients := universal(r.Clients()[:2])
		h := &heard{confirmed: map[int]int{}, gaps: map[int]int{}}
		s := waitroom.NewSubscriber(clients, h.message, h.confirm, h.gap)
		kept, dropped, added := r.Key("kept"), r.Key("dropped"), r.Key("added")
		s.Listen(kept)
		s.Listen(dropped)
		s.Start()
		defer s.Close()
		awaitSubscribers(t, clients, dropped, 1)

		r.Stop(1)
		testenv.WaitFor(t, 5*time.Second, "the gap on node 1", func() bool { return h.count(h.gaps, 1) == 1 })
		s.Stop(dropped)
		s.Listen(added)
		r.Start(1)

		for _, k := range []string{kept, added} {
			awaitSubscribers(t, clients, k, 1)
		}
		awaitSubscribers(t, clients, dropped, 0)
		if got := h.count(h.gaps, 0); got != 0 {
			t.Errorf("gaps on node 0: %d, want 0: its connection never dropped", got)
		}
		if err := clients[1].Publish(context.Background(), waitroom.Channel(added), "t2").Err(); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 5*time.Second, "the announcement on node 1 after it came back", func() bool { return h.has(added + "=t2") })
	})
}
