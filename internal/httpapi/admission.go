package httpapi

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/flashsale/flashsale/internal/ewma"
)

// admission limits how many orders one shop works on at once, and queues the
// rest at the door in arrival order (a flash sale's "waiting room").
//
// Why: for one hot product every order runs its critical section in turn
// anyway, so beyond a handful in flight more concurrency buys no throughput;
// it only piles lock attempts onto Redis. Redlock asks each node with a
// short timeout (a tenth of the TTL, at most 200 ms); when hundreds of
// buyers' attempts queue up on a node, they all time out together, every
// failed attempt adds a clean-up round, and the sale collapses into 503s.
// Queuing here, before any Redis call, keeps the lock traffic bounded. The
// lesson of the strategies is untouched: the buyers inside still race for
// the stock (strategy off still oversells).
//
// The queue is bounded by what the shop can serve within the wait, not by
// the wait alone. A flash sale's crowd is always bigger than the shop: a
// queue bounded only by time fills with buyers who wait out the whole wait
// and are turned away at its end, every one of them an open connection and
// a goroutine on the shop's cores, and the orders inside slow down for it.
// So the door keeps a moving average of how long an order holds its slot,
// and a buyer who finds ahead of him more than the slots can serve within
// half the wait ((queued+1) × hold ÷ slots > wait ÷ 2) is turned away at
// once, with Retry-After, in microseconds instead of after the wait. Half,
// because the estimate is an average: the holds vary (a GC pause, a slow
// commit), and a queue sized to the whole wait turned a quarter of its
// last buyers away at the end of it all the same. Until the first order
// has left, the door has no average and only the wait bounds the queue.
//
// A batched product's buyers go past the door (Orders.HasOwnQueue): they
// already queue in their shop's batch, whose leader alone asks for the
// lock and writes them all in one transaction. Held at the door, a batch
// could never hold more buyers than the door has slots, and the sale would
// sell at most that many per turn of the lock. So do redis-queue's, for
// the same reason: they queue for a round trip to Redis that the shop's
// buyers share, and take no lock.
type admission struct {
	slots  chan struct{} // nil: no limit
	wait   time.Duration
	obs    DoorObserver
	queued atomic.Int64  // orders waiting for a slot
	hold   ewma.Duration // how long an admitted order keeps its slot
}

// Why an order was turned away at the door (DoorObserver.TurnedAway).
const (
	// ShedQueueFull: more orders were waiting than the slots can serve
	// within half the wait; turned away at once.
	ShedQueueFull = "queue_full"
	// ShedWaitExpired: the order waited the whole wait for a slot.
	ShedWaitExpired = "wait_expired"
	// ShedRateLimited: the buyer clicked more often than the per-buyer
	// rate allows (429 rate_limited; ratelimit.go).
	ShedRateLimited = "rate_limited"
)

// newAdmission returns the door: with max <= 0 it admits every order at
// once, and only tells obs (which may be nil).
func newAdmission(max int, wait time.Duration, obs DoorObserver) *admission {
	if obs == nil {
		obs = noDoorObserver{}
	}
	a := &admission{wait: wait, obs: obs}
	if max > 0 {
		a.slots = make(chan struct{}, max)
	}
	return a
}

// enter takes a slot, waiting at most a.wait and never past ctx, and
// returns the function that gives it back. It returns an error wrapping
// errBusy (503 busy) at once if the queue ahead is longer than the slots
// serve within half the wait (or of ctx's deadline, if sooner), and after
// the wait if no slot came in time. Without a limit it admits at once. Safe
// for concurrent use.
func (a *admission) enter(ctx context.Context) (leave func(), err error) {
	if a.slots == nil {
		return a.admitted(), nil
	}
	select {
	case a.slots <- struct{}{}:
		return a.admitted(), nil
	default:
	}
	budget := a.wait
	if d, ok := ctx.Deadline(); ok && (budget <= 0 || time.Until(d) < budget) {
		budget = time.Until(d)
	}
	// Join the queue, then judge it: buyers who come together each see the
	// others ahead of them, and the bound holds for a crowd.
	n := a.queued.Add(1)
	if est, ok := a.waitFor(n); ok && budget > 0 && est > budget/2 {
		a.queued.Add(-1)
		a.obs.TurnedAway(ShedQueueFull)
		return nil, &busyError{retryAfter: est - budget/2}
	}
	caller := ctx
	if a.wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.wait)
		defer cancel()
	}
	a.obs.Queued(1)
	defer func() {
		a.queued.Add(-1)
		a.obs.Queued(-1)
	}()
	select {
	case a.slots <- struct{}{}: // blocked senders are served first come, first served
		return a.admitted(), nil
	case <-ctx.Done():
		if caller.Err() == nil { // the wait ran out, not the caller's patience
			a.obs.TurnedAway(ShedWaitExpired)
		}
		return nil, &busyError{}
	}
}

// waitFor estimates how long the nth order in the queue waits for its
// slot: n holds' worth of work shared by the slots. It reports false
// while no order has left yet.
func (a *admission) waitFor(n int64) (time.Duration, bool) {
	hold := a.hold.Get()
	if hold <= 0 {
		return 0, false
	}
	return time.Duration(n) * hold / time.Duration(cap(a.slots)), true
}

// admitted counts an order in and returns its leave, which gives the slot
// back and feeds how long it was held into the average.
func (a *admission) admitted() (leave func()) {
	a.obs.InFlight(1)
	start := time.Now()
	return func() {
		if a.slots != nil {
			a.hold.Add(time.Since(start))
			<-a.slots
		}
		a.obs.InFlight(-1)
	}
}

// busyError is the door's 503 busy: nothing reached Redis or the
// database. retryAfter, if positive, is how much sooner the queue would
// have had to move for this order to be served in time: the Retry-After
// the buyer is told, rounded up to whole seconds (at least 1).
type busyError struct{ retryAfter time.Duration }

func (e *busyError) Error() string {
	if e.retryAfter > 0 {
		return "shop busy: more orders are waiting than it serves in time; nothing was written; retry"
	}
	return "shop busy: too many orders in flight; nothing was written; retry"
}

func (e *busyError) Unwrap() error { return errBusy }

// RetryAfter is the Retry-After header's value in seconds.
func (e *busyError) RetryAfter() string { return wholeSeconds(e.retryAfter) }

// wholeSeconds is d rounded up to whole seconds, at least 1, as
// Retry-After says it.
func wholeSeconds(d time.Duration) string {
	s := (d + time.Second - 1) / time.Second
	return strconv.Itoa(max(1, int(s)))
}

// noDoorObserver is the DoorObserver of a router built without one.
type noDoorObserver struct{}

func (noDoorObserver) Queued(int)        {}
func (noDoorObserver) InFlight(int)      {}
func (noDoorObserver) TurnedAway(string) {}
