package order

import (
	"context"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Batching (stock.Product.BatchMax above zero): the buyers of one product
// queue in their shop process, and whoever holds the product lock for the
// process serves all that are queued, up to BatchMax, in one transaction;
// each buyer still gets its own answer. The rules:
//   - nobody waits for a batch to fill: a batch is whoever is queued when
//     the lock comes, no timer;
//   - one batch per lease, so other shops' leaders get their turn;
//   - one leader goroutine per product and process; it stops once nobody
//     is queued, and the next buyer starts a new one.
//
// A failed batch fails every buyer in it, and a repeated click is told
// duplicate_order: no per-buyer dedupe lock is needed, since the product
// lock serialises the batches (docs/batch.md).

// placeBatched queues req for product p's next batch in this process and
// waits for its answer. Until a batch allocates it, the buyer may leave:
// on ctx's end (ctx's error) or after the lock wait (ErrLockTimeout) it is
// withdrawn and nothing is written. A buyer who finds more ahead than the
// batches serve in half the lock wait gets ErrBusy at once (enqueue).
func (s *Service) placeBatched(ctx context.Context, p stock.Product, req Request, locker dlock.Locker) (Order, error) {
	w := &batchWaiter{req: req, done: make(chan answer, 1)}
	if !s.enqueue(p, locker, w, s.opts.LockWait) {
		return Order{}, fmt.Errorf("%w: the batches of %q ahead of this buyer would take more than half the lock wait (%v)",
			ErrBusy, p.ID, s.opts.LockWait)
	}
	wait := time.NewTimer(s.opts.LockWait)
	defer wait.Stop()
	select {
	case a := <-w.done:
		return a.order, a.err
	case <-ctx.Done():
	case <-wait.C:
	}
	if w.withdraw() {
		if err := ctx.Err(); err != nil {
			return Order{}, fmt.Errorf("order: waiting for a batch: %w", err)
		}
		return Order{}, fmt.Errorf("%w: no batch of %q took this buyer within the lock wait (%v)", ErrLockTimeout, p.ID, s.opts.LockWait)
	}
	a := <-w.done
	return a.order, a.err
}

// lead serves q while anybody is queued: it takes the product lock, serves
// one batch, releases the lock, and starts over. When the lock does not
// come (the lock wait ran out, Redis is down), the buyers queued before it
// asked get that error; those who came later stay queued for the next try.
func (s *Service) lead(p stock.Product, locker dlock.Locker, q *batchQueue) {
	defer s.leaders.Done()
	for {
		last, asked, ok := q.stillWanted()
		if !ok {
			return
		}
		lock, err := s.lockProduct(s.stopping, locker, p)
		if err != nil {
			for _, w := range q.take(0, last) {
				w.done <- answer{err: err}
			}
			continue
		}
		got := time.Now()
		var sale error
		if batch := q.take(p.BatchMax, q.lastSeq()); len(batch) > 0 {
			sale = s.serveBatch(lock, p, batch)
		}
		s.releaseProduct(context.Background(), p, lock, got, sale)
		q.cycle.Add(time.Since(asked))
	}
}

// serveBatch sells to batch holding lock, on the lock's context, and
// answers every buyer in it: its order, ErrSoldOut or ErrDuplicateOrder,
// each its own (sell); or, if the sale failed, all of them its error,
// which it returns.
func (s *Service) serveBatch(lock *dlock.Lock, p stock.Product, batch []*batchWaiter) error {
	ctx := lock.Context()
	reqs := make([]Request, len(batch))
	for i, w := range batch {
		reqs[i] = w.req
	}
	answers, err := s.sell(ctx, lock, p, reqs, func(i int) bool { return batch[i].claim() }, nil)
	if err != nil {
		// Every buyer gets the sale's error: a refusal in answers was made
		// against units and buyers of this very sale, which did not happen.
		err = s.fromCritical(context.Background(), ctx, p, err)
		answers = make([]answer, len(batch))
		for i := range answers {
			answers[i] = answer{err: err}
		}
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
	return err
}
