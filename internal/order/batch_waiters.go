package order

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/ewma"
	"github.com/flashsale/flashsale/internal/stock"
)

// The queue of a batched product (batch.go): its buyers in this process,
// in arrival order, and the one leader goroutine that serves them.

// batchQueue is the buyers of one product waiting in this process for a
// batch, and whether a leader serves them.
type batchQueue struct {
	mu      sync.Mutex
	waiting []*batchWaiter
	leading bool   // a lead goroutine runs for this queue
	seq     uint64 // the last waiter's number

	// cycle is how long one batch has been taking lately, lock asked to lock
	// given back. A lock that did not come is not counted: one lock wait in
	// the average would turn away all but the first buyer for a while.
	cycle ewma.Duration
	asked time.Time // when the leader asked for the lock of the batch under way
}

// batchWaiter is one buyer in a batchQueue.
type batchWaiter struct {
	req   Request
	seq   uint64
	state atomic.Int32 // waiterQueued, waiterTaken, waiterAllocated; or waiterWithdrawn
	done  chan answer  // buffered: the leader never blocks on it
}

// A waiter's states: a leader takes it into a batch, then allocates it (a
// unit, sold out, or a duplicate) inside the batch's transaction. Its
// buyer may give up until it is allocated, and whichever comes first wins:
// a buyer withdrawn is never allocated, so nothing is written for it.
const (
	waiterQueued int32 = iota
	waiterTaken
	waiterAllocated
	waiterWithdrawn
)

// withdraw gives w up, unless its batch has allocated it already.
func (w *batchWaiter) withdraw() bool {
	return w.state.CompareAndSwap(waiterQueued, waiterWithdrawn) ||
		w.state.CompareAndSwap(waiterTaken, waiterWithdrawn)
}

// claim allocates w in its batch's transaction, unless its buyer has given
// up; true as well when a run of the transaction before this one (retried
// after a deadlock) allocated it.
func (w *batchWaiter) claim() bool {
	return w.state.CompareAndSwap(waiterTaken, waiterAllocated) || w.state.Load() == waiterAllocated
}

// enqueue appends w to p's queue and starts a leader if none runs, unless
// the batches ahead would not reach w within half of wait (waitFor): then
// it returns false and w is not queued. A buyer who finds nobody waiting is
// always queued, so a leader runs and an estimate gone stale on a slow
// spell cannot turn every buyer away.
func (s *Service) enqueue(p stock.Product, locker dlock.Locker, w *batchWaiter, wait time.Duration) bool {
	v, _ := s.batches.LoadOrStore(p.ID, new(batchQueue))
	q := v.(*batchQueue)
	q.mu.Lock()
	if q.leading && q.waitFor(q.ahead()+1, p.BatchMax, time.Now()) > wait/2 {
		q.mu.Unlock()
		return false
	}
	q.seq++
	w.seq = q.seq
	q.waiting = append(q.waiting, w)
	start := !q.leading
	q.leading = true
	q.mu.Unlock()
	if start {
		s.leaders.Add(1)
		go s.lead(p, locker, q)
	}
	return true
}

// ahead counts the buyers waiting in q who have not withdrawn (a buyer
// who gave up stays in the queue until a leader takes past it); q.mu held.
func (q *batchQueue) ahead() int {
	n := 0
	for _, w := range q.waiting {
		if w.state.Load() != waiterWithdrawn {
			n++
		}
	}
	return n
}

// waitFor estimates how long the nth buyer in q waits for its batch at now,
// with batches of batchMax (all who wait, if <= 0): the batches ahead times
// how long a batch has been taking, or, past the first batch's worth, how
// long the one under way has taken so far if longer (the average is too
// slow for a sudden stall, and has nothing at a sale's first rush). n = 1
// waits zero. q.mu held.
func (q *batchQueue) waitFor(n, batchMax int, now time.Time) time.Duration {
	if n <= 1 {
		return 0
	}
	batches := 1
	if batchMax > 0 {
		batches = (n + batchMax - 1) / batchMax
	}
	cycle := q.cycle.Get()
	if batches > 1 && !q.asked.IsZero() {
		cycle = max(cycle, now.Sub(q.asked))
	}
	return time.Duration(batches) * cycle
}

// stillWanted drops the withdrawn waiters at the head of q and reports the
// last waiter's number, and notes that the leader asks for the lock now;
// if nobody is queued, the leader stops (ok false), and the next enqueue
// starts another.
func (q *batchQueue) stillWanted() (last uint64, asked time.Time, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.waiting) > 0 && q.waiting[0].state.Load() == waiterWithdrawn {
		q.waiting[0] = nil
		q.waiting = q.waiting[1:]
	}
	if len(q.waiting) == 0 {
		q.leading = false
		q.waiting = nil
		q.asked = time.Time{}
		return 0, time.Time{}, false
	}
	q.asked = time.Now()
	return q.seq, q.asked, true
}

// lastSeq is the number of the last waiter queued so far.
func (q *batchQueue) lastSeq() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.seq
}

// take removes from the head of q, in arrival order, up to max waiters
// (max <= 0: all) numbered up to last, and returns those it took; waiters
// withdrawn meanwhile are dropped and not counted.
func (q *batchQueue) take(max int, last uint64) []*batchWaiter {
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch []*batchWaiter
	n := 0
	for ; n < len(q.waiting); n++ {
		w := q.waiting[n]
		if w.seq > last || (max > 0 && len(batch) == max) {
			break
		}
		if w.state.CompareAndSwap(waiterQueued, waiterTaken) {
			batch = append(batch, w)
		}
	}
	clear(q.waiting[:n])
	q.waiting = q.waiting[n:]
	return batch
}
