package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/testenv"
)

// heldQueue is a queue whose replies from Redis px can hold back, with a
// read timeout long enough that a held trip waits for px.Release.
func heldQueue(t *testing.T, r *testenv.RedisNodes, name string) (*Queue, *testenv.Proxy, string) {
	t.Helper()
	px, err := testenv.NewProxy(r.DirectAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	c := redis.NewClient(&redis.Options{Addr: px.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	q := New(c)
	p := r.Key(name)
	if err := q.Load(context.Background(), p, 10); err != nil {
		t.Fatal(err)
	}
	// Loaded, so that the first trip's NOSCRIPT does not add a trip.
	if err := acceptScript.Load(context.Background(), r.Clients()[0]).Err(); err != nil {
		t.Fatal(err)
	}
	return q, px, p
}

// TestAcceptWithinWithdrawsUnsent: an accept queued behind a trip that
// does not come back is withdrawn at its wait, told ErrBusy, and never
// sent: its order is nowhere, its units are not taken, and the buyer may
// buy when it retries.
func TestAcceptWithinWithdrawsUnsent(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		q, px, p := heldQueue(t, r, "within")
		px.HoldAt(func([]byte) int { return 0 }) // the first trip's replies are held
		first := make(chan error, 1)
		go func() {
			_, err := q.Accept(ctx, rvOrder(p, "first"))
			first <- err
		}()
		rvTripOut(t, q)

		late := rvOrder(p, "late")
		_, err := q.AcceptWithin(ctx, late, 50*time.Millisecond)
		if !errors.Is(err, ErrBusy) {
			t.Fatalf("accept queued behind a held trip: got %v, want ErrBusy", err)
		}
		px.Release()
		if err := <-first; err != nil {
			t.Fatalf("the held trip's accept: %v", err)
		}
		rvIdle(t, q)

		direct := r.Clients()[0]
		if rvStream(t, direct, p)[late.ID] {
			t.Error("the withdrawn accept is in the stream")
		}
		if st, err := q.Status(ctx, late.ID); !errors.Is(err, ErrUnknownOrder) {
			t.Errorf("status of the withdrawn order: %+v, %v; want ErrUnknownOrder", st, err)
		}
		if left, err := direct.Get(ctx, stockKeyOf(p)).Int(); err != nil || left != 9 {
			t.Errorf("stock left: %d, %v; want 9 (the first accept's unit only)", left, err)
		}
		if _, err := q.AcceptWithin(ctx, late, 50*time.Millisecond); err != nil {
			t.Fatalf("the buyer's retry: %v", err)
		}
	})
}

// TestAcceptWithinWaitsForItsTrip: the wait bounds the queue, not the
// round trip. An accept whose trip has left when its wait passes waits
// for the trip's answer (it may have run), and gets it.
func TestAcceptWithinWaitsForItsTrip(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		q, px, p := heldQueue(t, r, "sent")
		px.HoldAt(func([]byte) int { return 0 })
		const wait = 20 * time.Millisecond
		start := time.Now()
		res := make(chan error, 1)
		go func() {
			_, err := q.AcceptWithin(ctx, rvOrder(p, "buyer"), wait)
			res <- err
		}()
		rvTripOut(t, q)
		waitFor(t, "the wait to pass", func() bool { return time.Since(start) > 5*wait })
		select {
		case err := <-res:
			t.Fatalf("answered while its trip was held: %v", err)
		default:
		}
		px.Release()
		if err := <-res; err != nil {
			t.Fatalf("accept whose trip had left at its wait: %v, want accepted", err)
		}
	})
}
