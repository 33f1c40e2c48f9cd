package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Faults against a consumer's two writers (consumer.go): a batch in
// flight that the sibling must leave alone, Close mid-batch,
// KeepConsuming while they linger, a failing batch's backoff.

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
		cs.KeepConsuming(p)
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
		cs.KeepConsuming(p)
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

// TestFaultLingerKeepConsumingRace: KeepConsuming hammered while the two
// writers linger out, many times; at the end, a product asked for recently has a consumer
// running, writes go through, and Close returns.
func TestFaultLingerKeepConsumingRace(t *testing.T) {
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
				wg.Go(func() { cs.KeepConsuming(p) })
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
		cs.KeepConsuming(p)
		waitFor(t, "the first failed write", func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.calls) >= 1 })
		window := idle + 2*claimEvery
		w.mu.Lock()
		deadline := w.calls[0].Add(window) // from the failure, not from when this test saw it
		w.mu.Unlock()
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
				if second.Before(deadline) {
					t.Errorf("the failed batch came back to this process %v after its failure (the backoff is %v)", second.Sub(first), window)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
