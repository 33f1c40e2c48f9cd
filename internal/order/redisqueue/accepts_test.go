package redisqueue

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestAcceptGivesUpWithItsContext: a buyer whose context ends while its
// accept waits for the next round trip is withdrawn, unsent: its script
// never runs. One whose trip is out when its context ends is answered
// with the context's error at once, not when Redis answers: its script
// may have run (here it does, as the trip goes on without it).
func TestAcceptGivesUpWithItsContext(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, c, q, p := loadedQueue(t, r, "give-up", 10)
		const delay = time.Second // the first trip stays out this long (under flushBound)
		r.SetDelay(0, delay)
		t.Cleanup(func() { r.SetDelay(0, 0) })
		start := time.Now()
		type result struct {
			err  error
			took time.Duration
		}
		first := make(chan result, 1)
		go func() {
			out, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			_, err := q.Accept(out, Order{ID: uuid.NewString(), UserID: "first", ProductID: p, Quantity: 1, CreatedAt: time.Now()})
			first <- result{err, time.Since(start)}
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
		res := <-first
		if !errors.Is(res.err, context.DeadlineExceeded) || res.took >= delay {
			t.Fatalf("first accept: got %v after %v, want its deadline before Redis answered (%v)", res.err, res.took, delay)
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
		if _, err := c.HGet(ctx, buyersKey(p), "first").Result(); err != nil {
			t.Errorf("the first buyer's script, sent before it gave up, did not run: %v", err)
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
		ctx, c, q, p := loadedQueue(t, r, "flushed", 10)
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

// TestAcceptRecordsItsOrderInTheSameTrip: an accepted order can be looked
// up as soon as Accept returns (its product is recorded in the trip that
// ran its script), and a refused one's record is deleted by the next trip,
// so that refused clicks leave no keys behind.
func TestAcceptRecordsItsOrderInTheSameTrip(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, c, q, p := loadedQueue(t, r, "recorded", 1)
		first := rvOrder(p, "buyer")
		if _, err := q.Accept(ctx, first); err != nil {
			t.Fatal(err)
		}
		if st, err := q.Status(ctx, first.ID); err != nil || st.Status != StatusQueued {
			t.Fatalf("status right after the accept: %+v, %v; want queued", st, err)
		}
		again, other := rvOrder(p, "buyer"), rvOrder(p, "late")
		if _, err := q.Accept(ctx, again); !errors.Is(err, stock.ErrDuplicate) {
			t.Fatalf("repeated click: got %v, want stock.ErrDuplicate", err)
		}
		if _, err := q.Accept(ctx, other); !errors.Is(err, stock.ErrSoldOut) {
			t.Fatalf("second buyer of one unit: got %v, want stock.ErrSoldOut", err)
		}
		waitFor(t, "the refused accepts' keys to be deleted", func() bool {
			n, err := c.Exists(ctx, orderKey(again.ID), orderKey(other.ID)).Result()
			return err == nil && n == 0
		})
		for _, o := range []Order{again, other} {
			if _, err := q.Status(ctx, o.ID); !errors.Is(err, stock.ErrUnknownOrder) {
				t.Errorf("status of refused order %s: got %v, want stock.ErrUnknownOrder", o.UserID, err)
			}
		}
		if st, err := q.Status(ctx, first.ID); err != nil || st.Status != StatusQueued {
			t.Errorf("status of the accepted order afterwards: %+v, %v; want queued", st, err)
		}
	})
}

// TestAcceptSentAgainKeepsItsRecord: the same order sent again after it
// was accepted (a caller's retry of o, or a double submit) is refused as a
// duplicate naming o's own id; the trip that deletes the refused accepts'
// keys must not delete the accepted order's.
func TestAcceptSentAgainKeepsItsRecord(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, _, q, p := loadedQueue(t, r, "sent-again", 10)
		o := rvOrder(p, "buyer")
		if _, err := q.Accept(ctx, o); err != nil {
			t.Fatal(err)
		}
		_, err := q.Accept(ctx, o)
		var dup *DuplicateError
		if !errors.As(err, &dup) || dup.Order != o.ID {
			t.Fatalf("sent again: got %v, want a duplicate naming %s", err, o.ID)
		}
		rvIdle(t, q) // the sender stops only once the refused keys' trip is done
		if st, err := q.Status(ctx, o.ID); err != nil || st.Status != StatusQueued {
			t.Errorf("status of the accepted order after it was sent again: %+v, %v; want queued", st, err)
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

// countWriter writes every batch and counts the orders.
type countWriter struct{ n atomic.Int64 }

func (w *countWriter) WriteQueued(_ context.Context, _ string, orders []Order) ([]*Refusal, int, error) {
	w.n.Add(int64(len(orders)))
	return make([]*Refusal, len(orders)), 1000, nil
}

// TestConsumerStopsAfterLingerAndStartsAgain: both writers of a product's
// consumer stop once nobody asked for it for Linger and its stream is empty,
// and the next KeepConsuming starts it again, which writes what came since.
func TestConsumerStopsAfterLingerAndStartsAgain(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, _, q, p := loadedQueue(t, r, "linger", 10)
		w := &countWriter{}
		cs := NewConsumers(q, w, ConsumerOptions{Linger: 50 * time.Millisecond, Writers: 2})
		defer cs.Close()
		running := func() bool {
			cs.mu.Lock()
			defer cs.mu.Unlock()
			return cs.running[p] != nil
		}
		for round, user := range []string{"first", "second"} {
			if _, err := q.Accept(ctx, Order{ID: uuid.NewString(), UserID: user, ProductID: p, Quantity: 1, CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			cs.KeepConsuming(p)
			waitFor(t, "the order to be written", func() bool { return w.n.Load() == int64(round+1) })
			waitFor(t, "the consumer to stop", func() bool { return !running() })
		}
		cs.Close() // returns only once every writer has stopped
	})
}

// loadedQueue is a Queue on r's first node and a product of its own,
// named name, with units loaded.
func loadedQueue(t *testing.T, r *testenv.RedisNodes, name string, units int) (context.Context, *redis.Client, *Queue, string) {
	t.Helper()
	ctx := context.Background()
	c := r.Clients()[0]
	q := New(c)
	p := r.Key(name)
	if err := q.Load(ctx, p, units); err != nil {
		t.Fatal(err)
	}
	return ctx, c, q, p
}

// acceptSome accepts n orders of product p, one each by buyers u0, u1...
func acceptSome(t *testing.T, q *Queue, p string, n int) {
	t.Helper()
	for i := range n {
		if _, err := q.Accept(context.Background(), rvOrder(p, "u"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
}
