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
//
// A batched product's buyers go past the door (Orders.QueuesInside): they
// already queue in their shop's batch, whose leader alone asks for the
// lock and writes them all in one transaction. Held at the door, a batch
// could never hold more buyers than the door has slots, and the sale would
// sell at most that many per turn of the lock. So do redis-queue's, for
// the same reason: they queue for a round trip to Redis that the shop's
// buyers share, and take no lock.
type admission struct {
	slots chan struct{} // nil: no limit
	wait  time.Duration
	obs   DoorObserver
}

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
// errBusy (503 busy) if no slot came in time. Without a limit it admits at
// once.
func (a *admission) enter(ctx context.Context) (leave func(), err error) {
	admitted := func() (leave func(), err error) {
		a.obs.InFlight(1)
		return func() {
			if a.slots != nil {
				<-a.slots
			}
			a.obs.InFlight(-1)
		}, nil
	}
	if a.slots == nil {
		return admitted()
	}
	caller := ctx
	if a.wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.wait)
		defer cancel()
	}
	a.obs.Queued(1)
	select {
	case a.slots <- struct{}{}: // blocked senders are served first come, first served
		a.obs.Queued(-1)
		return admitted()
	case <-ctx.Done():
		a.obs.Queued(-1)
		if caller.Err() == nil { // the wait ran out, not the caller's patience
			a.obs.TurnedAway()
		}
		return nil, &requestError{kind: errBusy, msg: "shop busy: too many orders in flight; nothing was written; retry"}
	}
}

// noDoorObserver is the DoorObserver of a router built without one.
type noDoorObserver struct{}

func (noDoorObserver) Queued(int)   {}
func (noDoorObserver) InFlight(int) {}
func (noDoorObserver) TurnedAway()  {}
