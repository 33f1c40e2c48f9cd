package waitroom_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock/waitroom"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// heard records what a Subscriber reports, for the test to wait on.
type heard struct {
	mu        sync.Mutex
	messages  []string // key=id
	confirmed map[int]int
	gaps      map[int]int
}

func (h *heard) message(key, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.messages = append(h.messages, key+"="+id)
}

func (h *heard) confirm(node int, _ string) { h.mu.Lock(); h.confirmed[node]++; h.mu.Unlock() }
func (h *heard) gap(node int)               { h.mu.Lock(); h.gaps[node]++; h.mu.Unlock() }

func (h *heard) count(m map[int]int, node int) int { h.mu.Lock(); defer h.mu.Unlock(); return m[node] }

func (h *heard) has(msg string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.messages {
		if m == msg {
			return true
		}
	}
	return false
}

func universal(cs []*redis.Client) []redis.UniversalClient {
	out := make([]redis.UniversalClient, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

// A key listened to before Start is subscribed to on every node once the
// subscriber starts; what is published on its channel after the
// confirmation arrives, from every node; a node's dropped connection is
// reported as a gap, and the reconnection subscribes to the key again; a
// key stopped is no longer heard.
func TestSubscriber(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		clients := universal(r.Clients()[:2])
		h := &heard{confirmed: map[int]int{}, gaps: map[int]int{}}
		s := waitroom.NewSubscriber(clients, h.message, h.confirm, h.gap)
		key, other := r.Key("k"), r.Key("other")
		s.Listen(key)
		if !s.Listening(key) || s.Listening(other) {
			t.Fatal("Listening does not follow Listen")
		}
		s.Start()
		defer s.Close()
		for node := range clients {
			testenv.WaitFor(t, 5*time.Second, "the subscription confirmed", func() bool { return h.count(h.confirmed, node) >= 1 })
		}
		publish := func(c redis.UniversalClient, k, id string) {
			t.Helper()
			if err := c.Publish(ctx, waitroom.Channel(k), id).Err(); err != nil {
				t.Fatal(err)
			}
		}
		publish(clients[0], key, "a")
		publish(clients[1], key, "b")
		publish(clients[0], other, "x") // not listened to
		testenv.WaitFor(t, 5*time.Second, "both announcements", func() bool { return h.has(key+"=a") && h.has(key+"=b") })

		r.Stop(1) // node 1's connection drops
		testenv.WaitFor(t, 5*time.Second, "the gap on node 1", func() bool { return h.count(h.gaps, 1) == 1 })
		r.Start(1)
		testenv.WaitFor(t, 10*time.Second, "node 1 subscribed again", func() bool { return h.count(h.confirmed, 1) >= 2 })
		publish(clients[1], key, "c")
		testenv.WaitFor(t, 5*time.Second, "the announcement after the reconnection", func() bool { return h.has(key + "=c") })

		s.Stop(key)
		if s.Listening(key) {
			t.Fatal("still listening after Stop")
		}
		testenv.WaitFor(t, 5*time.Second, "no subscriber left on the key's channel", func() bool {
			n, err := clients[0].PubSubNumSub(ctx, waitroom.Channel(key)).Result()
			return err == nil && n[waitroom.Channel(key)] == 0
		})
		publish(clients[0], key, "late")
		publish(clients[0], other, "y")
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, m := range h.messages {
			if m == key+"=late" || m == other+"=x" || m == other+"=y" {
				t.Errorf("heard %s, which nobody listens to", m)
			}
		}
	})
}

// Close ends the connections and the goroutines; a Start after Close
// connects nothing.
func TestSubscriberClose(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		h := &heard{confirmed: map[int]int{}, gaps: map[int]int{}}
		s := waitroom.NewSubscriber(universal(r.Clients()[:1]), h.message, h.confirm, h.gap)
		s.Close()
		s.Listen(r.Key("k"))
		s.Start()
		s.Close() // again: nothing to stop
		n, err := r.Clients()[0].PubSubNumSub(context.Background(), waitroom.Channel(r.Key("k"))).Result()
		if err != nil || n[waitroom.Channel(r.Key("k"))] != 0 {
			t.Errorf("subscribers after Close: %v, %v; want none", n, err)
		}
	})
}
