package redisqueue

// Faults against the shared accept trips (accepts.go): cut connections,
// flushed scripts, lost replies, callers that give up. Bursts are in
// accepts_burst_test.go, the consumer's two writers in
// consumer_writers_test.go.

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
)

func rvOrder(p, user string) Order {
	return Order{ID: uuid.NewString(), UserID: user, ProductID: p, Quantity: 1, CreatedAt: time.Now()}
}

func rvIdle(t *testing.T, q *Queue) {
	t.Helper()
	waitFor(t, "the send goroutine to stop", func() bool {
		q.accepts.mu.Lock()
		defer q.accepts.mu.Unlock()
		return !q.accepts.sending && len(q.accepts.waiting) == 0
	})
}

func rvTripOut(t *testing.T, q *Queue) {
	t.Helper()
	waitFor(t, "a trip to leave", func() bool {
		q.accepts.mu.Lock()
		defer q.accepts.mu.Unlock()
		return q.accepts.sending && len(q.accepts.waiting) == 0
	})
}

// definite reports whether err is one of Accept's "changing nothing" answers.
func definite(err error) bool {
	return errors.Is(err, stock.ErrSoldOut) || errors.Is(err, stock.ErrDuplicate) || errors.Is(err, stock.ErrNotLoaded)
}

// rvSnapshot reads p's stream and stock at one moment: the order ids in
// the stream (failing t on a duplicate), and the stock left.
func rvSnapshot(ctx context.Context, t *testing.T, c *redis.Client, p string) (in map[string]bool, left int, err error) {
	t.Helper()
	var xr *redis.XMessageSliceCmd
	var gs *redis.StringCmd
	if _, err := c.TxPipelined(ctx, func(p2 redis.Pipeliner) error {
		xr = p2.XRange(ctx, streamKey(p), "-", "+")
		gs = p2.Get(ctx, stockKeyOf(p))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	in = map[string]bool{}
	for _, m := range xr.Val() {
		id, _ := m.Values["id"].(string)
		if in[id] {
			t.Errorf("order %s is in the stream twice", id)
		}
		in[id] = true
	}
	left, err = gs.Int()
	return in, left, err
}

// rvStream returns the order ids in p's stream, failing on a duplicate.
func rvStream(t *testing.T, c *redis.Client, p string) map[string]bool {
	t.Helper()
	msgs, err := c.XRange(context.Background(), streamKey(p), "-", "+").Result()
	if err != nil {
		t.Fatalf("xrange: %v", err)
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		id, _ := m.Values["id"].(string)
		if ids[id] {
			t.Errorf("order %s is in the stream twice", id)
		}
		ids[id] = true
	}
	return ids
}

// TestFaultCtxEndsAfterTripLeftThenConnectionCut: the caller gives up
// after its trip left, and then the trip fails. Accept's contract:
// stock.ErrUnavailable, or an error wrapping ctx.Err().
func TestFaultCtxEndsAfterTripLeftThenConnectionCut(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, _, q, p := loadedQueue(t, r, "cut", 10)
		r.SetDelay(0, 300*time.Millisecond)
		cctx, cancel := context.WithCancel(ctx)
		res := make(chan error, 1)
		go func() {
			_, err := q.Accept(cctx, rvOrder(p, "buyer"))
			res <- err
		}()
		rvTripOut(t, q)
		cancel()
		r.Stop(0) // cuts the trip's connection
		err := <-res
		r.Start(0)
		r.SetDelay(0, 0)
		t.Logf("Accept: %v", err)
		if !errors.Is(err, stock.ErrUnavailable) && !errors.Is(err, context.Canceled) {
			t.Errorf("Accept: got %v; want stock.ErrUnavailable or context.Canceled", err)
		}
	})
}

// TestFaultCallerDeadline: a caller whose trip left is answered at its own
// deadline, not when a slow Redis answers the trip.
func TestFaultCallerDeadline(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		c := redis.NewClient(&redis.Options{Addr: r.Addrs()[0], MaxRetries: -1, ContextTimeoutEnabled: true,
			ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, DisableIdentity: true})
		defer c.Close()
		q := New(c)
		p := r.Key("overrun")
		if err := q.Load(ctx, p, 10); err != nil {
			t.Fatal(err)
		}
		r.SetDelay(0, 100*time.Millisecond) // a round trip ≈ 200 ms
		defer r.SetDelay(0, 0)
		dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := q.Accept(dctx, rvOrder(p, "hurried"))
		el := time.Since(start)
		t.Logf("Accept with a 50 ms deadline returned after %v: %v", el, err)
		// The code before this change: one script per call, on the caller's ctx.
		o := rvOrder(p, "old")
		bctx, bcancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer bcancel()
		keys := []string{stockKeyOf(p), buyersKey(p), streamKey(p), statusKey(p)}
		start = time.Now()
		berr := acceptScript.Run(bctx, c, keys, o.UserID, o.Quantity, o.ID, "0", p).Err()
		t.Logf("baseline (acceptScript.Run on the caller's ctx) returned after %v: %v", time.Since(start), berr)
		if el > 300*time.Millisecond {
			t.Errorf("a caller with a 50 ms deadline waited %v", el)
		}
	})
}

// TestFaultNoscriptTwice: the scripts are flushed again between two trips
// that each meet NOSCRIPT. The accept still runs once (the second try
// sends the script's text), never answered "unavailable" for a script
// that ran nowhere on a reachable Redis.
func TestFaultNoscriptTwice(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		c := r.Clients()[0]
		direct := redis.NewClient(&redis.Options{Addr: r.DirectAddrs()[0], DisableIdentity: true})
		defer direct.Close()
		q := New(c)
		p := r.Key("noscript2")
		if err := q.Load(ctx, p, 10); err != nil {
			t.Fatal(err)
		}
		if err := direct.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		r.SetDelay(0, 150*time.Millisecond)
		defer r.SetDelay(0, 0)
		o := rvOrder(p, "b")
		res := make(chan error, 1)
		go func() { _, err := q.Accept(ctx, o); res <- err }()
		// The reload lands about 3 delays in; the rerun about 5.
		waitFor(t, "the reload to land", func() bool {
			ok, err := direct.ScriptExists(ctx, acceptScript.Hash()).Result()
			return err == nil && ok[0]
		})
		if err := direct.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		err := <-res
		t.Logf("Accept: %v", err)
		ran := rvStream(t, direct, p)[o.ID]
		if err != nil {
			t.Errorf("Accept on a reachable Redis: %v (script ran: %v)", err, ran)
		}
	})
}

// TestFaultInDoubtAcceptKeepsItsRecord: the replies of a trip are lost
// after its script ran (the caller is told unavailable: in doubt). The
// order's key is not deleted, and the caller's retry of the same order,
// refused as a duplicate naming its own id, does not delete it either:
// the order is looked up as queued throughout.
func TestFaultInDoubtAcceptKeepsItsRecord(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		px, err := testenv.NewProxy(r.DirectAddrs()[0])
		if err != nil {
			t.Fatal(err)
		}
		defer px.Close()
		c := redis.NewClient(&redis.Options{Addr: px.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true,
			ReadTimeout: time.Second, WriteTimeout: time.Second, DisableIdentity: true})
		defer c.Close()
		direct := r.Clients()[0]
		q := New(c)
		p := r.Key("indoubt")
		if err := q.Load(ctx, p, 10); err != nil {
			t.Fatal(err)
		}
		// Loaded, so that a held NOSCRIPT does not stop the script running.
		if err := acceptScript.Load(ctx, direct).Err(); err != nil {
			t.Fatal(err)
		}
		o := rvOrder(p, "buyer")
		px.HoldAt(func([]byte) int { return 0 }) // no reply comes back
		_, err = q.Accept(ctx, o)
		px.Release()
		if !errors.Is(err, stock.ErrUnavailable) {
			t.Fatalf("accept with its replies held: got %v, want stock.ErrUnavailable", err)
		}
		rvIdle(t, q)
		if !rvStream(t, direct, p)[o.ID] {
			t.Fatal("the script did not run within the client's read timeout")
		}
		if st, err := q.Status(ctx, o.ID); err != nil || st.Status != StatusQueued {
			t.Errorf("status of the in-doubt order: %+v, %v; want queued", st, err)
		}
		_, err = q.Accept(ctx, o)
		var dup *DuplicateError
		if !errors.As(err, &dup) || dup.Order != o.ID {
			t.Fatalf("retry: got %v, want a duplicate naming %s", err, o.ID)
		}
		rvIdle(t, q)
		if st, err := q.Status(ctx, o.ID); err != nil || st.Status != StatusQueued {
			t.Errorf("status after the retry: %+v, %v; want queued", st, err)
		}
	})
}

// TestFaultPreCancelledCtxNotSent: a caller whose context is cancelled
// before Accept is called (or before its trip leaves) is never sent.
func TestFaultPreCancelledCtxNotSent(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, _, q, p := loadedQueue(t, r, "precancel", 1000)
		dead, cancel := context.WithCancel(ctx)
		cancel()
		ran := 0
		for i := range 300 {
			_, err := q.Accept(dead, rvOrder(p, "u"+strconv.Itoa(i)))
			if err == nil {
				ran++
			} else if !errors.Is(err, context.Canceled) {
				t.Errorf("Accept: %v", err)
			}
			rvIdle(t, q)
		}
		if ran > 0 {
			t.Errorf("%d of 300 accepts with an already-cancelled context ran their script", ran)
		}
	})
}
