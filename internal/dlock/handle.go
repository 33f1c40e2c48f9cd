package dlock

import (
	"context"
	"fmt"
	"time"
)

// A lock kept by a service that another package speaks to (package
// etcdlock, on etcd; package zklock, on ZooKeeper) hands out the same
// handles as the modes here, so that the code taking locks takes them all
// alike. NewHandle builds such a handle around a Holder, the part of it
// that belongs to that package; CheckTTL and TimedOut give its errors the
// shape of the modes' own.

// Holder is how a lock of another package renews and lets go of one
// acquisition. A handle calls Refresh from Lock.Refresh (and from its
// watchdog, if the grant asks for one), and once either
// Release, from Lock.Release, or Abandon, from Lock.Abandon. Refresh may
// be called from any goroutine, also during the other two.
type Holder interface {
	// Refresh confirms that the acquisition still holds the lock and
	// returns how long from now it is sure to go on holding it. ttl is
	// what Lock.Refresh was given: a lock whose lease the service keeps
	// (a ZooKeeper session) may ignore it. It returns an error wrapping
	// ErrNotHeld if the lock is gone, ErrUnavailable if the service does
	// not answer.
	Refresh(ctx context.Context, ttl time.Duration) (time.Duration, error)
	// Release lets go of the lock: an error wrapping ErrNotHeld if it was
	// gone already, ErrUnavailable if the service did not answer.
	Release(ctx context.Context) error
	// Abandon lets go of the lock without releasing it: it must keep
	// others out for as long as its lease would have (see Lock.Abandon),
	// then let them in. It must return at once.
	Abandon()
}

// Grant describes one acquisition of a lock of another package, for
// NewHandle.
type Grant struct {
	Key   string
	Token string // what proves this acquisition, as Lock.Token returns it
	Fence int64  // the fencing token (Lock.Fence), 0 if the lock mints none
	Epoch int64  // the epoch of the service that granted it (Lock.Epoch), or 0
	// TTL is the lease the lock was granted for, and ValidUntil the time
	// until which it is sure to be held, as known at the grant.
	TTL        time.Duration
	ValidUntil time.Time
	// Watchdog asks the handle to renew the lock through Holder.Refresh
	// every TTL/3, as the modes' handles do (so HoldRenewals holds those
	// renewals back), and to cancel Context, with a cause wrapping
	// ErrNotHeld, once a renewal finds the lock gone or the validity runs
	// out first. Without it the lock's package keeps the lease itself.
	Watchdog bool
}

// NewHandle returns the handle of g, which h renews and releases. Its
// Context is derived from ctx. Without g.Watchdog the lock's package
// cancels ctx, with a cause wrapping ErrNotHeld, once it finds the lock
// lost, and HoldRenewals does nothing. Fence and Epoch return g's.
// Everything else behaves as for the modes here.
func NewHandle(ctx context.Context, g Grant, h Holder) *Lock {
	l := newLock(ctx, g.Key, g.Token, g.TTL, g.ValidUntil, heldElsewhere{h}, g.Watchdog)
	l.fence, l.epoch = g.Fence, g.Epoch // before anyone but this goroutine has l
	return l
}

// heldElsewhere makes a Holder a handle's mode.
type heldElsewhere struct{ h Holder }

func (x heldElsewhere) refresh(ctx context.Context, _ *Lock, ttl time.Duration) (time.Duration, error) {
	return x.h.Refresh(ctx, ttl)
}

func (x heldElsewhere) release(ctx context.Context, _ *Lock, _ bool) (bool, error) {
	return false, x.h.Release(ctx)
}

// abandon lets its package run the lock out as its lease would.
func (x heldElsewhere) abandon(*Lock) { x.h.Abandon() }

// CheckTTL returns an error for a ttl under a millisecond, which every
// mode but off rejects (Redis counts PX in milliseconds).
func CheckTTL(ttl time.Duration) error {
	if ttl < time.Millisecond {
		return fmt.Errorf("dlock: ttl %v is under the 1ms Redis can count", ttl)
	}
	return nil
}

// TimedOut is the error of a Lock on key whose wait ran out: it wraps
// ErrTimeout and, if ctx ended first, ctx.Err() as well. The last try's
// error, if any, is only quoted: the outcome is the timeout.
func TimedOut(ctx context.Context, key string, wait time.Duration, last error) error {
	var lastTry string
	if last != nil {
		lastTry = fmt.Sprintf(" (last try: %v)", last)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %q: %w%s", ErrTimeout, key, err, lastTry)
	}
	return fmt.Errorf("%w: %q after %v%s", ErrTimeout, key, wait, lastTry)
}
