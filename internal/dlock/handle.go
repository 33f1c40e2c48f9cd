package dlock

import (
	"context"
	"fmt"
	"time"
)

// Locks of other packages (etcdlock, zklock) hand out these same handles:
// NewHandle wraps their Holder; CheckTTL and TimedOut shape their errors.

// Holder is how a lock of another package renews and lets go of one
// acquisition. A handle calls Refresh from any goroutine, also during the
// others, and then once Release or Abandon.
type Holder interface {
	// Refresh confirms the lock is still held and returns how long from now
	// it surely stays held (ttl may be ignored). It returns ErrNotHeld if the
	// lock is gone, ErrUnavailable if the service does not answer.
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
	// TTL is the granted lease; ValidUntil is when it surely ends.
	TTL        time.Duration
	ValidUntil time.Time
	// Watchdog asks the handle to renew through Holder.Refresh every TTL/3
	// and cancel Context (cause wrapping ErrNotHeld) once the lock is lost.
	// Without it the lock's package keeps the lease itself.
	Watchdog bool
}

// NewHandle returns the handle of g, which h renews and releases, its
// Context derived from ctx. Without g.Watchdog the lock's package cancels
// ctx (cause wrapping ErrNotHeld) once it finds the lock lost, and
// HoldRenewals does nothing.
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
