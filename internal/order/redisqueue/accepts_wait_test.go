package redisqueue

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
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

// TestAcceptByWithdrawsUnsent: an accept queued behind a trip that
// does not come back is withdrawn at its wait, told stock.ErrBusy, and never
// sent: its order is nowhere, its units are not taken, and the buyer may
// buy when it retries.
func TestAcceptByWithdrawsUnsent(t *testing.T) {
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
		_, err := q.AcceptBy(ctx, late, time.Now().Add(50*time.Millisecond))
		if !errors.Is(err, stock.ErrBusy) {
			t.Fatalf("accept queued behind a held trip: got %v, want stock.ErrBusy", err)
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
		if st, err := q.Status(ctx, late.ID); !errors.Is(err, stock.ErrUnknownOrder) {
			t.Errorf("status of the withdrawn order: %+v, %v; want stock.ErrUnknownOrder", st, err)
		}
		if left, err := direct.Get(ctx, stockKeyOf(p)).Int(); err != nil || left != 9 {
			t.Errorf("stock left: %d, %v; want 9 (the first accept's unit only)", left, err)
		}
		if _, err := q.AcceptBy(ctx, late, time.Now().Add(50*time.Millisecond)); err != nil {
			t.Fatalf("the buyer's retry: %v", err)
		}
	})
}

// TestAcceptByWaitsForItsTrip: the wait bounds the queue, not the
// round trip. An accept whose trip has left when its wait passes waits
// for the trip's answer (it may have run), and gets it.
func TestAcceptByWaitsForItsTrip(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		q, px, p := heldQueue(t, r, "sent")
		px.HoldAt(func([]byte) int { return 0 })
		sendBy := make(chan time.Time, 1)
		res := make(chan error, 1)
		go func() {
			by := time.Now().Add(200 * time.Millisecond)
			sendBy <- by
			_, err := q.AcceptBy(ctx, rvOrder(p, "buyer"), by)
			res <- err
		}()
		by := <-sendBy
		rvTripOut(t, q)
		waitFor(t, "the wait to pass", func() bool { return time.Now().After(by) })
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

// TestAcceptByBurstInvariants: many accepts at once on a slow Redis,
// with waits from a microsecond to longer than a trip (so that many waits
// pass just as a trip takes their call), some with contexts that end too,
// some buyers twice. Afterwards: nothing waits and the send goroutine is
// gone; every accepted order is in the stream once and can be looked up;
// nothing answered stock.ErrBusy is in the stream or has a key; every definite
// refusal left nothing; the units add up.
func TestAcceptByBurstInvariants(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		const units, n = 400, 1200
		ctx, c, q, p := loadedQueue(t, r, "wburst", units)
		r.SetDelay(0, 3*time.Millisecond)
		defer r.SetDelay(0, 0)
		before := runtime.NumGoroutine()
		waits := []time.Duration{0, time.Microsecond, 50 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 8 * time.Millisecond, 30 * time.Millisecond}
		type answer struct {
			o   Order
			err error
		}
		answers := make([]answer, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				o := rvOrder(p, "u"+strconv.Itoa(i%1000))
				actx, cancel := ctx, context.CancelFunc(func() {})
				if i%5 == 0 {
					actx, cancel = context.WithTimeout(ctx, time.Duration(i%40)*time.Millisecond)
				}
				defer cancel()
				var sendBy time.Time // zero: no bound
				if w := waits[i%len(waits)]; w > 0 {
					sendBy = time.Now().Add(w)
				}
				_, err := q.AcceptBy(actx, o, sendBy)
				answers[i] = answer{o, err}
			})
		}
		close(start)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("some accept never returned")
		}
		r.SetDelay(0, 0)
		rvIdle(t, q)
		in, left, err := rvSnapshot(ctx, t, c, p)
		counts := map[string]int{}
		for _, a := range answers {
			switch {
			case a.err == nil:
				counts["accepted"]++
				if !in[a.o.ID] {
					t.Errorf("accepted order %s is not in the stream", a.o.ID)
				}
				if st, err := q.Status(ctx, a.o.ID); err != nil || st.Status != StatusQueued {
					t.Errorf("accepted %s: status %+v, %v", a.o.ID, st, err)
				}
			case errors.Is(a.err, stock.ErrBusy):
				counts["busy"]++
				if in[a.o.ID] {
					t.Errorf("order %s answered busy but in the stream", a.o.ID)
				}
				if n, err := c.Exists(ctx, orderKey(a.o.ID)).Result(); err != nil || n != 0 {
					t.Errorf("order %s answered busy but its key exists (%d, %v)", a.o.ID, n, err)
				}
			case definite(a.err):
				counts["refused"]++
				if in[a.o.ID] {
					t.Errorf("order %s refused (%v) but in the stream", a.o.ID, a.err)
				}
			case errors.Is(a.err, context.DeadlineExceeded) || errors.Is(a.err, stock.ErrUnavailable):
				counts["in doubt"]++
				if in[a.o.ID] {
					counts["in doubt, ran"]++
				}
			default:
				counts["other"]++
				t.Errorf("order %s: unexpected %v", a.o.ID, a.err)
			}
		}
		if err != nil || left+len(in) != units {
			t.Errorf("stock %d (%v) + %d queued != %d", left, err, len(in), units)
		}
		t.Logf("answers %v, stream %d, stock left %d", counts, len(in), left)
		if counts["busy"] == 0 {
			t.Log("no accept was told busy: the burst did not test the wait")
		}
		waitFor(t, "goroutines to settle", func() bool { return runtime.NumGoroutine() <= before+2 })
	})
}

// TestAcceptByNoscriptRerun: the scripts are flushed and Redis is
// slow, and the accepts' waits are shorter than the trip with its NOSCRIPT
// rerun. Those the trip took are answered by the rerun (accepted, never
// busy: the rerun is their trip's), and the ones queued behind are told
// busy and left nothing.
func TestAcceptByNoscriptRerun(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, c, q, p := loadedQueue(t, r, "noscriptwait", 100)
		direct := redis.NewClient(&redis.Options{Addr: r.DirectAddrs()[0], DisableIdentity: true})
		defer direct.Close()
		if err := direct.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		r.SetDelay(0, 20*time.Millisecond) // a trip ≈ 40 ms, with its rerun ≈ 80 ms
		defer r.SetDelay(0, 0)
		const wait = 10 * time.Millisecond
		first := rvOrder(p, "first")
		res := make(chan error, 1)
		go func() { _, err := q.AcceptBy(ctx, first, time.Now().Add(wait)); res <- err }()
		rvTripOut(t, q)
		var late []Order
		var lateErr []error
		for i := range 5 {
			o := rvOrder(p, "late"+strconv.Itoa(i))
			_, err := q.AcceptBy(ctx, o, time.Now().Add(wait))
			late, lateErr = append(late, o), append(lateErr, err)
		}
		if err := <-res; err != nil {
			t.Errorf("the accept whose trip met NOSCRIPT: %v, want accepted", err)
		}
		r.SetDelay(0, 0)
		rvIdle(t, q)
		in := rvStream(t, c, p)
		if !in[first.ID] {
			t.Error("the first accept is not in the stream")
		}
		for i, o := range late {
			if errors.Is(lateErr[i], stock.ErrBusy) && in[o.ID] {
				t.Errorf("late%d told busy but in the stream", i)
			}
			if lateErr[i] == nil && !in[o.ID] {
				t.Errorf("late%d accepted but not in the stream", i)
			}
			t.Logf("late%d: %v", i, lateErr[i])
		}
		left, _ := c.Get(ctx, stockKeyOf(p)).Int()
		if left+len(in) != 100 {
			t.Errorf("stock %d + %d queued != 100", left, len(in))
		}
	})
}
