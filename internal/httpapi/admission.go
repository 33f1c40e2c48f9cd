package httpapi

import (
	"context"
	"time"
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
// lesson of the lock modes is untouched: the buyers inside still race for
// the stock (mode off still oversells).
type admission struct {
	slots chan struct{}
	wait  time.Duration
}

// newAdmission returns nil (no limit) when max <= 0.
func newAdmission(max int, wait time.Duration) *admission {
	if max <= 0 {
		return nil
	}
	return &admission{slots: make(chan struct{}, max), wait: wait}
}

// enter takes a slot, waiting at most a.wait and never past ctx, and
// returns the function that gives it back. It returns an error wrapping
// errBusy (503 busy) if no slot came in time. A nil admission admits at
// once.
func (a *admission) enter(ctx context.Context) (leave func(), err error) {
	if a == nil {
		return func() {}, nil
	}
	if a.wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.wait)
		defer cancel()
	}
	select {
	case a.slots <- struct{}{}: // blocked senders are served first come, first served
		return func() { <-a.slots }, nil
	case <-ctx.Done():
		return nil, &requestError{kind: errBusy, msg: "shop busy: too many orders in flight; retry"}
	}
}
