package queue

// Faults against the shared accept trips (accepts.go) and the consumer's
// two writers (consumer.go): bursts, cut connections, flushed scripts,
// callers that give up, a slow or failing batch.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/testenv"
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
	return errors.Is(err, ErrSoldOut) || errors.Is(err, ErrDuplicate) || errors.Is(err, ErrNotLoaded)
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
// ErrUnavailable, or an error wrapping ctx.Err().
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
		if !errors.Is(err, ErrUnavailable) && !errors.Is(err, context.Canceled) {
			t.Errorf("Accept: got %v; want ErrUnavailable or context.Canceled", err)
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
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("accept with its replies held: got %v, want ErrUnavailable", err)
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

// TestFaultBurstInvariants: thousands of accepts at once, a third of them
// with contexts that end at random moments. Afterwards: nothing waits,
// the send goroutine is gone, every accepted order is in the stream once,
// every definite refusal left nothing (one that gave up or met no answer
// may be either), and the units add up.
func TestFaultBurstInvariants(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		const stock, n = 750, 1000 // more buyers than units, and some of them click twice
		ctx, c, q, p := loadedQueue(t, r, "burst", stock)
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
			case errors.Is(a.err, context.DeadlineExceeded) || errors.Is(a.err, ErrUnavailable):
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
		if err != nil || left+len(in) != stock {
			t.Errorf("stock %d (%v) + %d queued != %d", left, err, len(in), stock)
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
		const stock = 5000
		ctx, c, q, p := loadedQueue(t, r, "cutburst", stock)
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
				case errors.Is(err, ErrUnavailable):
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
		if left+len(in) != stock {
			t.Errorf("stock %d + %d queued != %d", left, len(in), stock)
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

// recWriter records every delivery of an order, and holds the first batch
// until released.
type recWriter struct {
	mu        sync.Mutex
	seen      map[string]int
	inFlight  map[string]bool
	overlap   []string
	release   chan struct{}
	firstOnce sync.Once
}

func (w *recWriter) WriteQueued(ctx context.Context, _ string, orders []Order) ([]*Refusal, int, error) {
	w.mu.Lock()
	for _, o := range orders {
		w.seen[o.ID]++
		if w.inFlight[o.ID] {
			w.overlap = append(w.overlap, o.ID)
		}
		w.inFlight[o.ID] = true
	}
	w.mu.Unlock()
	hold := false
	w.firstOnce.Do(func() { hold = true })
	if hold {
		select {
		case <-w.release:
		case <-ctx.Done():
		}
	}
	w.mu.Lock()
	for _, o := range orders {
		delete(w.inFlight, o.ID)
	}
	w.mu.Unlock()
	return make([]*Refusal, len(orders)), 1000, nil
}

// TestFaultSiblingLeavesInFlightBatch: a product's two writers share one
// consumer name, so XAUTOCLAIM would hand one the batch its sibling is
// still writing once it is idle ClaimIdle; the claimer drops the entries
// in flight, so no order reaches the Writer twice at once and Observe
// counts each once.
func TestFaultSiblingLeavesInFlightBatch(t *testing.T) {
	testenv.SkipShort(t, "holds a batch past ClaimIdle")
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, _, q, p := loadedQueue(t, r, "sibling", 100)
		acceptSome(t, q, p, 5)
		w := &recWriter{seen: map[string]int{}, inFlight: map[string]bool{}, release: make(chan struct{})}
		var observed atomic.Int64
		cs := NewConsumers(q, w, ConsumerOptions{ClaimIdle: 100 * time.Millisecond, Writers: 2,
			Observe: func(_ string, written, _ int) { observed.Add(int64(written)) }})
		cs.Watch(p)
		// Hold the first batch for longer than ClaimIdle + claimEvery.
		waitFor(t, "the first batch", func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.seen) == 5 })
		deadline := time.Now().Add(claimEvery + 500*time.Millisecond)
		for time.Now().Before(deadline) {
			w.mu.Lock()
			o := len(w.overlap)
			w.mu.Unlock()
			if o > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(w.release)
		waitFor(t, "the backlog to drain", func() bool {
			b, err := q.Backlog(ctx, p)
			return err == nil && b.Drained()
		})
		cs.Close()
		w.mu.Lock()
		defer w.mu.Unlock()
		if len(w.overlap) > 0 {
			t.Errorf("%d orders handed to the Writer again while their first write was still running (same process)", len(w.overlap))
		}
		if observed.Load() != 5 {
			t.Errorf("Observe counted %d written; 5 orders were", observed.Load())
		}
	})
}

// blockWriter holds every batch until released, counting calls.
type blockWriter struct {
	started chan struct{}
	release chan struct{}
	n       atomic.Int64
	once    sync.Once
}

func (w *blockWriter) WriteQueued(_ context.Context, _ string, orders []Order) ([]*Refusal, int, error) {
	w.once.Do(func() { close(w.started) })
	<-w.release
	w.n.Add(int64(len(orders)))
	return make([]*Refusal, len(orders)), 1000, nil
}

// TestFaultCloseMidBatchTwoWriters: Close while a batch is mid-write waits
// for it and its acknowledgement.
func TestFaultCloseMidBatchTwoWriters(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, _, q, p := loadedQueue(t, r, "closemid", 100)
		acceptSome(t, q, p, 3)
		w := &blockWriter{started: make(chan struct{}), release: make(chan struct{})}
		cs := NewConsumers(q, w, ConsumerOptions{Writers: 2, BatchMax: 1})
		cs.Watch(p)
		<-w.started
		closed := make(chan struct{})
		go func() { cs.Close(); close(closed) }()
		select {
		case <-closed:
			t.Fatal("Close returned while a batch was being written")
		case <-time.After(200 * time.Millisecond):
		}
		close(w.release)
		<-closed
		b, err := q.Backlog(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if b.Length != 3-w.n.Load() {
			t.Errorf("backlog %+v after %d written: the written ones must be acknowledged", b, w.n.Load())
		}
		if b.Pending != b.Length-(3-2) && b.Pending > 2 {
			t.Errorf("pending %d", b.Pending)
		}
	})
}

// TestFaultLingerWatchRace: Watch hammered while the two writers linger
// out, many times; at the end, a product watched recently has a consumer
// running, writes go through, and Close returns.
func TestFaultLingerWatchRace(t *testing.T) {
	testenv.SkipShort(t, "20 rounds of lingering out; TestConsumerStopsAfterLingerAndStartsAgain checks one")
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, _, q, p := loadedQueue(t, r, "lingerrace", 1000)
		w := &countWriter{}
		cs := NewConsumers(q, w, ConsumerOptions{Linger: 5 * time.Millisecond, Writers: 2})
		defer cs.Close()
		accepted := int64(0)
		for round := range 20 {
			if _, err := q.Accept(ctx, rvOrder(p, "u"+strconv.Itoa(round))); err != nil {
				t.Fatal(err)
			}
			accepted++
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(func() { cs.Watch(p) })
			}
			wg.Wait()
			waitFor(t, fmt.Sprintf("round %d's order to be written", round), func() bool { return w.n.Load() >= accepted })
			if round%2 == 0 {
				waitFor(t, "the consumer to stop", func() bool {
					cs.mu.Lock()
					defer cs.mu.Unlock()
					return cs.running[p] == nil
				})
			}
		}
		if w.n.Load() != accepted {
			t.Errorf("written %d, accepted %d", w.n.Load(), accepted)
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

// failWriter fails every batch, recording when.
type failWriter struct {
	mu    sync.Mutex
	calls []time.Time
}

func (w *failWriter) WriteQueued(context.Context, string, []Order) ([]*Refusal, int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, time.Now())
	return nil, 0, errors.New("database down")
}

// TestFaultFailedBatchBackoffHoldsBothWriters: after a failed write the
// consumer claims nothing for longer than ClaimIdle and one round of
// claiming, so that a consumer that can write claims the entries first:
// its sibling writer, same process, same failing database, does not claim
// them back within that window.
func TestFaultFailedBatchBackoffHoldsBothWriters(t *testing.T) {
	testenv.SkipShort(t, "waits out a ClaimIdle and two rounds of claiming; TestConsumersCutOffShopDoesNotStarveOthers checks the backoff")
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, _, q, p := loadedQueue(t, r, "backoff", 10)
		if _, err := q.Accept(ctx, rvOrder(p, "b")); err != nil {
			t.Fatal(err)
		}
		w := &failWriter{}
		const idle = 100 * time.Millisecond
		cs := NewConsumers(q, w, ConsumerOptions{ClaimIdle: idle, Writers: 2})
		defer cs.Close()
		cs.Watch(p)
		waitFor(t, "the first failed write", func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.calls) >= 1 })
		window := idle + 2*claimEvery
		deadline := time.Now().Add(window)
		for time.Now().Before(deadline) {
			w.mu.Lock()
			n := len(w.calls)
			first := w.calls[0]
			var second time.Time
			if n > 1 {
				second = w.calls[1]
			}
			w.mu.Unlock()
			if n > 1 {
				t.Errorf("the failed batch came back to this process %v after its failure (the backoff is %v)", second.Sub(first), window)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
