package redisqueue

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/redis/go-redis/v9"
)

// Bursts of accepts against the shared trips (accepts.go): thousands at
// once, a node cut mid-burst, a client built like a shop's.

// TestFaultBurstInvariants: thousands of accepts at once, a third of them
// with contexts that end at random moments. Afterwards: nothing waits,
// the send goroutine is gone, every accepted order is in the stream once,
// every definite refusal left nothing (one that gave up or met no answer
// may be either), and the units add up.
func TestFaultBurstInvariants(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		const units, n = 750, 1000 // more buyers than units, and some of them click twice
		ctx, c, q, p := loadedQueue(t, r, "burst", units)
		before := runtime.NumGoroutine()
		type answer struct {
			o   Order
			err error
		}
		answers := make([]answer, n)
		var wg sync.WaitGroup
		var maxWaiting atomic.Int64
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				q.accepts.mu.Lock()
				w := int64(len(q.accepts.waiting))
				q.accepts.mu.Unlock()
				if w > maxWaiting.Load() {
					maxWaiting.Store(w)
				}
				runtime.Gosched()
			}
		}()
		for i := range n {
			wg.Go(func() {
				o := rvOrder(p, "u"+strconv.Itoa(i%900))
				actx, cancel := ctx, context.CancelFunc(func() {})
				if i%3 == 0 {
					actx, cancel = context.WithTimeout(ctx, time.Duration(i%50)*time.Millisecond)
				}
				defer cancel()
				_, err := q.Accept(actx, o)
				answers[i] = answer{o, err}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("some accept never returned")
		}
		close(stop)
		rvIdle(t, q)
		// One snapshot of the stream and the stock (a timed-out trip's
		// scripts may still be running on the server).
		in, left, err := rvSnapshot(ctx, t, c, p)
		counts := map[string]int{}
		for _, a := range answers {
			switch {
			case a.err == nil:
				counts["accepted"]++
				if !in[a.o.ID] {
					t.Errorf("accepted order %s is not in the stream", a.o.ID)
				}
			case definite(a.err):
				counts["refused"]++
				if in[a.o.ID] {
					t.Errorf("order %s refused (%v) but in the stream", a.o.ID, a.err)
				}
			case errors.Is(a.err, context.DeadlineExceeded) || errors.Is(a.err, stock.ErrUnavailable):
				// Gave up, or Redis did not answer: withdrawn if its trip
				// had not left, else in doubt.
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
		t.Logf("answers %v, stream %d, stock left %d, most waiting at once %d", counts, len(in), left, maxWaiting.Load())
		waitFor(t, "goroutines to settle", func() bool { return runtime.NumGoroutine() <= before+2 })
	})
}

// TestFaultCutMidBurst: a node cut while bursts of accepts are on the
// wire (half-way through the callers). Every caller answers within the
// client's timeouts; an accepted order is in the stream and can be looked
// up, a definite refusal left nothing, in-doubt ones are either; units
// add up.
func TestFaultCutMidBurst(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		const units = 5000
		ctx, c, q, p := loadedQueue(t, r, "cutburst", units)
		r.SetDelay(0, 20*time.Millisecond)
		var mu sync.Mutex
		var accepted, refused, doubt []Order
		var wg sync.WaitGroup
		for i := range 500 {
			wg.Go(func() {
				o := rvOrder(p, "u"+strconv.Itoa(i))
				_, err := q.Accept(ctx, o)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					accepted = append(accepted, o)
				case definite(err):
					refused = append(refused, o)
				case errors.Is(err, stock.ErrUnavailable):
					doubt = append(doubt, o)
				default:
					t.Errorf("unexpected %v", err)
				}
			})
			if i == 250 {
				rvTripOut(t, q)
				r.Stop(0)
				time.Sleep(50 * time.Millisecond) // let some fail on the dead node
				r.Start(0)
			}
		}
		wg.Wait()
		r.SetDelay(0, 0)
		rvIdle(t, q)
		in := rvStream(t, c, p)
		for _, o := range accepted {
			if !in[o.ID] {
				t.Errorf("accepted %s lost", o.ID)
			}
			if st, err := q.Status(ctx, o.ID); err != nil || st.Status != StatusQueued {
				t.Errorf("accepted %s: status %+v, %v; want queued", o.ID, st, err)
			}
		}
		for _, o := range refused {
			if in[o.ID] {
				t.Errorf("refused %s queued", o.ID)
			}
		}
		ranInDoubt := 0
		for _, o := range doubt {
			if in[o.ID] {
				ranInDoubt++
			}
		}
		left, _ := c.Get(ctx, stockKeyOf(p)).Int()
		if left+len(in) != units {
			t.Errorf("stock %d + %d queued != %d", left, len(in), units)
		}
		t.Logf("accepted %d, refused %d, in doubt %d (of which ran %d); stream %d", len(accepted), len(refused), len(doubt), ranInDoubt, len(in))
	})
}

// TestFaultBurstProductionClient: a burst on a client built like the
// shop's (ReadTimeout 500 ms, ContextTimeoutEnabled, no retries): every
// accept is answered, none unavailable on a healthy Redis, however many
// are queued (each trip carries at most tripMax, so each is read within
// the client's timeout). On redis-server only: miniredis runs each script
// in a fresh interpreter, which under the race detector takes longer than
// the read timeout for a trip of tripMax (and fails most accepts sent one
// per call too).
func TestFaultBurstProductionClient(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		if r.Mode() == testenv.Embedded {
			t.Skip("miniredis is too slow for a production client's read timeout under load")
		}
		ctx := context.Background()
		c := redis.NewClient(&redis.Options{Addr: r.DirectAddrs()[0], MaxRetries: -1, ContextTimeoutEnabled: true,
			PoolSize: 128, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, DisableIdentity: true})
		defer c.Close()
		q := New(c)
		p := r.Key("burst-prod")
		n := testenv.Short(300, 1500)
		if err := q.Load(ctx, p, n); err != nil {
			t.Fatal(err)
		}
		var ok atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				if _, err := q.Accept(ctx, rvOrder(p, "u"+strconv.Itoa(i))); err != nil {
					t.Errorf("accept on a healthy Redis: %v", err)
					return
				}
				ok.Add(1)
			})
		}
		close(start)
		wg.Wait()
		if xl, err := c.XLen(ctx, streamKey(p)).Result(); err != nil || xl != ok.Load() || ok.Load() != int64(n) {
			t.Errorf("accepted %d of %d, stream %d (%v)", ok.Load(), n, xl, err)
		}
	})
}
