package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/testenv"
)

// TestAcceptWithdrawnBeforeItsTrip: a buyer whose context ends while its
// accept waits for the next round trip is withdrawn, unsent: its script
// never runs, and the accepts already on the wire are answered.
func TestAcceptWithdrawnBeforeItsTrip(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		c := r.Clients()[0]
		q := New(c)
		p := r.Key("withdraw")
		if err := q.Load(ctx, p, 10); err != nil {
			t.Fatal(err)
		}
		r.SetDelay(0, 300*time.Millisecond) // the first trip stays out a while
		t.Cleanup(func() { r.SetDelay(0, 0) })
		first := make(chan error, 1)
		go func() {
			_, err := q.Accept(ctx, Order{ID: uuid.NewString(), UserID: "first", ProductID: p, Quantity: 1, CreatedAt: time.Now()})
			first <- err
		}()
		waitFor(t, "the first accept's trip to leave", func() bool {
			q.accepts.mu.Lock()
			defer q.accepts.mu.Unlock()
			return q.accepts.sending && len(q.accepts.waiting) == 0
		})

		late, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := q.Accept(late, Order{ID: uuid.NewString(), UserID: "late", ProductID: p, Quantity: 1, CreatedAt: time.Now()})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("late accept: got %v, want its deadline", err)
		}
		if err := <-first; err != nil {
			t.Fatalf("first accept: %v", err)
		}
		r.SetDelay(0, 0)
		waitFor(t, "the queue to be idle", func() bool {
			q.accepts.mu.Lock()
			defer q.accepts.mu.Unlock()
			return !q.accepts.sending
		})
		if held, err := c.HGet(ctx, buyersKey(p), "late").Result(); !errors.Is(err, redis.Nil) {
			t.Errorf("the withdrawn buyer has order %q (%v): its script ran", held, err)
		}
		if left, err := c.Get(ctx, stockKeyOf(p)).Int(); err != nil || left != 9 {
			t.Errorf("stock %d, %v; want 9: only the first accept took a unit", left, err)
		}
	})
}

// TestAcceptAfterScriptsFlushed: a Redis that lost its scripts (restarted,
// or SCRIPT FLUSH) answers NOSCRIPT; the accept loads the script and runs
// once, neither refused nor run twice.
func TestAcceptAfterScriptsFlushed(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		c := r.Clients()[0]
		q := New(c)
		p := r.Key("flushed")
		if err := q.Load(ctx, p, 10); err != nil {
			t.Fatal(err)
		}
		for i, user := range []string{"before", "after"} {
			if i == 1 {
				if err := c.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			o := Order{ID: uuid.NewString(), UserID: user, ProductID: p, Quantity: 1, CreatedAt: time.Now()}
			if _, err := q.Accept(ctx, o); err != nil {
				t.Fatalf("accept %s: %v", user, err)
			}
			st, err := q.Status(ctx, o.ID)
			if err != nil || st.Status != StatusQueued {
				t.Fatalf("status of %s's order: %+v, %v; want queued", user, st, err)
			}
		}
		if n, err := c.XLen(ctx, streamKey(p)).Result(); err != nil || n != 2 {
			t.Errorf("stream length %d, %v; want 2", n, err)
		}
	})
}

// waitFor waits up to 5 s for cond, checking every millisecond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
