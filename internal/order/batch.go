package order

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Batching: one lease, many buyers. Unbatched, every buyer of a hot
// product pays for the lock (two Redis round trips), its reads, its write
// and its commit, one buyer after the other, while the rest of the queue
// waits. Batched (stock.Product.BatchMax above zero), the buyers of one
// product queue inside their shop process, and whoever holds the product
// lock for the process serves all of them that are queued, up to BatchMax,
// in one transaction: one stock read, one query for which of them already
// have an order, allocation in arrival order until the stock runs out, one
// stock write, one multi-row INSERT, one commit. Each buyer still gets its
// own answer. It is the idea of the database engines built for hot rows
// (AliSQL's inventory hint, PolarDB's hot-row grouping), moved to where
// the lock already is.
//
// The rules that keep it fair and quick:
//   - nobody waits for a batch to fill: a batch is whoever is queued when
//     the lock comes, no timer;
//   - one batch per lease: the lock is released after every batch, so other
//     shops' leaders (queued on the same lock) get their turn;
//   - one leader goroutine per product and process takes the lock; it stops
//     once nobody is queued, and the next buyer starts a new one.
//
// What it costs: a batch that fails (the database, a lost lock) fails every
// buyer in it; the simulated business work runs once per batch; and a
// repeated click is told duplicate_order by the batch, where unbatched it
// is duplicate_request while the first click is in flight (the per-buyer
// dedupe lock is not needed: the product lock serialises the batches, and
// each batch asks the database who has bought).

// batchQueue is the buyers of one product waiting in this process for a
// batch, and whether a leader serves them.
type batchQueue struct {
	mu      sync.Mutex
	waiting []*batchWaiter
	leading bool   // a lead goroutine runs for this queue
	seq     uint64 // the last waiter's number
}

// batchWaiter is one buyer in a batchQueue.
type batchWaiter struct {
	req   Request
	seq   uint64
	state atomic.Int32     // waiterQueued, waiterTaken, waiterAllocated; or waiterWithdrawn
	done  chan batchAnswer // buffered: the leader never blocks on it
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

// errWithdrawn is the answer of a buyer that gave up before its batch
// allocated it; it has returned already, so nobody reads it.
var errWithdrawn = errors.New("order: withdrawn from its batch")

// batchAnswer is what one buyer of a batch is told.
type batchAnswer struct {
	order Order
	err   error
}

// placeBatched queues req for product p's next batch in this process, and
// waits for its answer. A buyer whose ctx ends before its batch has
// allocated it (while it is queued, or while its batch waits for the
// database or does the work) is withdrawn: nothing is written for it and it
// gets ctx's error at once. Once allocated, it waits for the batch's
// answer, which is the rest of one transaction away: its order, if the
// commit lands, as for a commit already sent.
func (s *Service) placeBatched(ctx context.Context, p stock.Product, req Request, locker dlock.Locker) (Order, error) {
	w := &batchWaiter{req: req, done: make(chan batchAnswer, 1)}
	s.enqueue(p, locker, w)
	select {
	case a := <-w.done:
		return a.order, a.err
	case <-ctx.Done():
	}
	if w.withdraw() {
		return Order{}, fmt.Errorf("order: waiting for a batch: %w", ctx.Err())
	}
	a := <-w.done
	return a.order, a.err
}

// enqueue appends w to p's queue and starts a leader if none runs.
func (s *Service) enqueue(p stock.Product, locker dlock.Locker, w *batchWaiter) {
	v, _ := s.batches.LoadOrStore(p.ID, new(batchQueue))
	q := v.(*batchQueue)
	q.mu.Lock()
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
}

// lead serves q while anybody is queued: it takes the product lock, serves
// one batch, releases the lock, and starts over. When the lock does not
// come (the lock wait ran out, Redis is down), the buyers queued before it
// asked get that error; those who came later stay queued for the next try.
func (s *Service) lead(p stock.Product, locker dlock.Locker, q *batchQueue) {
	defer s.leaders.Done()
	for {
		last, ok := q.stillWanted()
		if !ok {
			return
		}
		lock, err := s.lockProduct(s.stopping, locker, p)
		if err != nil {
			for _, w := range q.take(0, last) {
				w.done <- batchAnswer{err: err}
			}
			continue
		}
		got := time.Now()
		if batch := q.take(p.BatchMax, q.lastSeq()); len(batch) > 0 {
			s.serveBatch(lock, p, batch)
		}
		s.releaseProduct(context.Background(), p, lock, got)
	}
}

// stillWanted drops the withdrawn waiters at the head of q and reports the
// last waiter's number; if nobody is queued, the leader stops (ok false),
// and the next enqueue starts another.
func (q *batchQueue) stillWanted() (last uint64, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.waiting) > 0 && q.waiting[0].state.Load() == waiterWithdrawn {
		q.waiting[0] = nil
		q.waiting = q.waiting[1:]
	}
	if len(q.waiting) == 0 {
		q.leading = false
		q.waiting = nil
		return 0, false
	}
	return q.seq, true
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

// serveBatch sells to batch holding lock, in one transaction on the lock's
// context, and answers every buyer in it: its order, ErrSoldOut or
// ErrDuplicateOrder, each its own; or, if the transaction failed, all of
// them the same error, and nothing was written.
//
// Under fenced, one registration of the lock's token covers the batch
// (buyFenced explains why it comes before the read).
func (s *Service) serveBatch(lock *dlock.Lock, p stock.Product, batch []*batchWaiter) {
	ctx := lock.Context()
	answers := make([]batchAnswer, len(batch))
	var sold []Order
	remaining := -1
	err := s.commit(ctx, lock, p, func(tx *gorm.DB) error {
		sold = sold[:0] // commit may run this again after a deadlock
		fenced := p.Strategy.Fences()
		if fenced {
			if err := s.registerFence(ctx, tx, p, lock.Fence()); err != nil {
				return err
			}
		}
		left, err := readStock(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		bought, err := whoBought(ctx, tx, p.ID, batch)
		if err != nil {
			return err
		}
		if err := s.work(ctx, p); err != nil {
			return err
		}
		for i, w := range batch {
			if !w.claim() {
				answers[i] = batchAnswer{err: errWithdrawn} // nobody reads it
				continue
			}
			answers[i], left = allocate(p, w.req, left, bought)
			if answers[i].err == nil {
				sold = append(sold, answers[i].order)
			}
		}
		remaining = left
		if len(sold) == 0 {
			return nil // under fenced the registration still commits
		}
		if fenced {
			err = s.writeStockFenced(ctx, tx, p, left, lock.Fence())
		} else {
			err = tx.Exec("UPDATE products SET stock = ? WHERE id = ?", left, p.ID).Error
		}
		if err != nil {
			return err
		}
		rows := make([]orderRow, len(sold))
		for i, o := range sold {
			rows[i] = toRow(o)
		}
		return tx.Create(&rows).Error
	})
	switch {
	case err != nil && (len(sold) == 0 || !s.landedAfterAll(s.stopping, sold[0], err)):
		err = s.fromCritical(context.Background(), ctx, p, err)
		for i := range answers {
			answers[i] = batchAnswer{err: err}
		}
	case remaining == 0:
		s.markSoldOut(p.ID)
	}
	answered := 0 // not those who gave up before the batch claimed them
	for _, w := range batch {
		if w.state.Load() == waiterAllocated {
			answered++
		}
	}
	c := s.events(p.ID)
	c.batches.Add(1)
	c.batched.Add(int64(answered))
	s.opts.Observer.Batched(p.Strategy, answered)
	for i, w := range batch {
		w.done <- answers[i]
	}
}

// allocate answers one buyer of a batch, in arrival order, from left units:
// a duplicate if the buyer has an order (in the database, or earlier in
// this batch), sold out if fewer than it asks for are left, or a new order.
// It returns the units left after it, and records the buyer in bought.
func allocate(p stock.Product, req Request, left int, bought map[string]bool) (batchAnswer, int) {
	switch {
	case bought[req.UserID]:
		return batchAnswer{err: fmt.Errorf("%w: user %q already bought %q", ErrDuplicateOrder, req.UserID, p.ID)}, left
	case left < req.Quantity:
		return batchAnswer{err: fmt.Errorf("%w: %q has %d left, asked for %d", ErrSoldOut, p.ID, left, req.Quantity)}, left
	}
	bought[req.UserID] = true
	return batchAnswer{order: newOrder(p, req)}, left - req.Quantity
}

// whoBought returns which of batch's buyers already have an order for
// product, in one query through q.
func whoBought(ctx context.Context, q *gorm.DB, product string, batch []*batchWaiter) (map[string]bool, error) {
	users := make([]string, len(batch))
	for i, w := range batch {
		users[i] = w.req.UserID
	}
	var have []string
	err := q.WithContext(ctx).
		Raw("SELECT DISTINCT user_id FROM orders WHERE product_id = ? AND user_id IN ?", product, users).
		Scan(&have).Error
	bought := make(map[string]bool, len(batch))
	for _, u := range have {
		bought[u] = true
	}
	return bought, err
}
