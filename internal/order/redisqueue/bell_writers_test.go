package redisqueue

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// The bell against a consumer's two writers: one ring per trip must not
// leave the second writer asleep while a trip's orders wait.

// oneTrip accepts an order of p for each of users, all in one trip: it
// keeps any send goroutine from starting while they queue, then sends
// them itself.
func oneTrip(t *testing.T, q *Queue, p string, users []string) {
	t.Helper()
	a := &q.accepts
	waitFor(t, "no trip out", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.sending {
			return false
		}
		a.sending = true
		return true
	})
	var wg sync.WaitGroup
	for _, u := range users {
		wg.Go(func() {
			if _, err := q.Accept(context.Background(), rvOrder(p, u)); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, "the accepts to queue", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.waiting) == len(users)
	})
	go q.send()
	wg.Wait()
}

// TestOneTripWakesBothWriters: a trip that queues more than a batch rings
// once; while the writer it woke holds the database with the first batch,
// the other writer reads the second (what Writers is for), well before
// its poll.
func TestOneTripWakesBothWriters(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		reads := &blockHook{}
		c := redis.NewClient(&redis.Options{Addr: r.Addrs()[0], DisableIdentity: true})
		t.Cleanup(func() { _ = c.Close() })
		c.AddHook(reads)
		q := New(c)
		p := r.Key("onetrip")
		if err := q.Load(context.Background(), p, 10); err != nil {
			t.Fatal(err)
		}
		w := &blockWriter{started: make(chan struct{}), release: make(chan struct{})}
		cs := NewConsumers(q, w, ConsumerOptions{Writers: 2, BatchMax: 1})
		defer cs.Close()
		defer close(w.release)
		cs.KeepConsuming(p)
		waitFor(t, "both writers to find the stream empty", func() bool {
			reads.mu.Lock()
			defer reads.mu.Unlock()
			return reads.reads >= 2
		})
		before := readsOf(reads)
		start := time.Now()
		oneTrip(t, q, p, []string{"a", "b"})
		<-w.started
		waitFor(t, "the second batch to be read", func() bool { return readsOf(reads) >= before+2 })
		if lag := time.Since(start); lag > pollEvery/2 {
			t.Errorf("the second batch was read %v after its trip, while the first held the database; want at once", lag)
		}
	})
}

func readsOf(h *blockHook) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reads
}
