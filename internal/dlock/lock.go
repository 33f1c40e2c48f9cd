package dlock

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Lock is one acquisition of a lock: it carries the key, the token that
// proves ownership and the way this mode refreshes and releases, so any
// goroutine holding the handle can refresh or release it. It is safe for
// concurrent use.
//
// The caller must call Release when the work is done, also after the lock
// was lost (a waiting room keeps track of the handles its waiters got until
// then, see inRoom), and should do the work under Context, which ends when the lock is
// released or found lost.
type Lock struct {
	key   string
	token string
	fence int64 // the fencing token of this grant (fenced, etcd), 0 otherwise
	epoch int64 // the epoch of the cluster that granted it (another package's lock), 0 otherwise

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu         sync.Mutex
	mode       holder // how it refreshes and releases; a waiting room wraps it (inRoom) once the watchdog runs
	ttl        time.Duration
	validUntil time.Time // on the monotonic clock
	sent       uint64    // refreshes sent so far; each one's number is its order
	applied    uint64    // the number of the latest-sent refresh whose reply set ttl
	released   bool
	dog        watchdog
}

// holder is what each mode adds to a handle: how it renews and how it lets
// go. Both must leave a lock that is no longer this handle's alone (naive's
// DEL being the lesson that breaks that rule).
type holder interface {
	// refresh extends the lock to ttl and returns its new validity, measured
	// from before the call was sent; ErrNotHeld if the lock is gone.
	refresh(ctx context.Context, l *Lock, ttl time.Duration) (time.Duration, error)
	// release lets go of the lock; ErrNotHeld if it had already expired.
	// It announces the release on the key's channel (waitroom.Channel)
	// unless quiet, which the waiting room asks for (inRoom), and reports
	// whether it announced it all the same or needs no announcement (a
	// release that hands lua's key on in turns).
	release(ctx context.Context, l *Lock, quiet bool) (announced bool, err error)
}

// abandoner is a holder with something to do when its lock is abandoned:
// one in a waiting room, or of another package.
type abandoner interface{ abandon(l *Lock) }

// newLock returns the handle of an acquisition for ttl that is sure to be
// held until validUntil. With watchdog set it renews the lock every ttl/3
// until Release or until ctx ends.
func newLock(ctx context.Context, key, token string, ttl time.Duration, validUntil time.Time,
	mode holder, watchdog bool) *Lock {
	l := &Lock{key: key, token: token, mode: mode, ttl: ttl, validUntil: validUntil}
	l.ctx, l.cancel = context.WithCancelCause(ctx)
	if watchdog {
		l.startWatchdog()
	}
	return l
}

// Key returns the locked key.
func (l *Lock) Key() string { return l.key }

// Token returns the value this acquisition stored under the key: a fresh
// UUID for lua, fenced, redlock and etcd, the
// constant "1" for naive (a token that proves nothing, which is the flaw),
// and "" for off. It is safe for concurrent use.
func (l *Lock) Token() string { return l.token }

// Context returns the context to do the protected work under. It is derived
// from the ctx given to TryLock or Lock and is cancelled by Release and, for
// every mode with a watchdog (all but off and naive), as soon as the lock
// is known to be lost: then context.Cause returns an error wrapping
// ErrNotHeld, and the work must stop instead of writing unprotected.
func (l *Lock) Context() context.Context { return l.ctx }

// Validity returns how much longer the lock is sure to be held, as last
// known: the TTL less the time spent acquiring or refreshing (and, for
// redlock, the clock drift allowance), counted down since. It is 0 once that
// time has passed.
func (l *Lock) Validity() time.Duration {
	return max(0, time.Until(l.until()))
}

// currentTTL returns the TTL the lock was last set to.
func (l *Lock) currentTTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

// until returns the time the lock is sure to be held until.
func (l *Lock) until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.validUntil
}

// Refresh extends the lock to ttl from now, if this handle still holds it
// (etcd renews its lease for the TTL it was granted, whatever ttl says).
// It returns ErrNotHeld (and cancels Context) if the lock expired or was
// taken over, ErrNotHeld without a round trip after Release, and
// ErrUnavailable if Redis (or the etcd cluster) cannot be reached. Naive
// locks cannot be refreshed: Refresh returns an error wrapping
// errors.ErrUnsupported. With a watchdog, later renewals use the new ttl,
// from ttl/3 after this one on. Any goroutine may call it, also while
// another refreshes or releases.
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	l.mu.Lock()
	released := l.released
	l.mu.Unlock()
	if released {
		return notHeld(l.key, "was released")
	}
	if cause := context.Cause(l.ctx); errors.Is(cause, ErrNotHeld) {
		return cause // once found lost, a handle stays lost
	}
	return l.refresh(ctx, ttl)
}

func (l *Lock) refresh(ctx context.Context, ttl time.Duration) error {
	l.mu.Lock()
	l.sent++
	seq, start, mode := l.sent, time.Now(), l.mode
	l.mu.Unlock()
	validity, err := mode.refresh(ctx, l, ttl)
	switch {
	case errors.Is(err, ErrNotHeld):
		l.cancel(err)
		return err
	case errors.Is(err, errors.ErrUnsupported): // naive: nothing was sent
		return err
	case err != nil:
		// It may have reached Redis all the same: if it asked for a shorter
		// TTL, the lock may now end sooner than the validity says. Count
		// it as if it had, allowing for Redlock's clock drift.
		l.mu.Lock()
		defer l.mu.Unlock()
		if until := start.Add(ttl - drift(ttl)); until.Before(l.validUntil) {
			l.setValidUntil(until)
			l.rescheduleWatchdog()
		}
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// A Refresh and a watchdog renewal can be in flight at once, with
	// different TTLs, and answer in either order. Redis keeps the TTL of
	// the call it ran last, which is the one sent last: so the call sent
	// last that answered sets the TTL and the validity, counted from its
	// own start. The reply of a call sent before it comes too late to say
	// anything new, and must not extend the validity: at most shorten it,
	// in case Redis ran the calls in another order than they were sent.
	if until := start.Add(validity); seq > l.applied {
		l.applied, l.ttl = seq, ttl
		l.setValidUntil(until)
	} else if until.Before(l.validUntil) {
		l.setValidUntil(until)
	}
	l.rescheduleWatchdog()
	return nil
}

// Release lets go of the lock and cancels Context. It works once: a second
// call returns ErrNotHeld without a round trip. It returns ErrNotHeld if the
// lock had already expired or been taken over (lua, fenced, redlock and
// etcd leave the new holder's key alone; naive deletes it anyway, which is
// the flaw), and ErrUnavailable if Redis (or the etcd cluster) cannot be
// reached, in which case the lock expires after its TTL. Release uses ctx
// for the round trips: when the work was cancelled, release with a live
// context such as context.WithoutCancel(ctx). Any goroutine may call it.
func (l *Lock) Release(ctx context.Context) error {
	l.mu.Lock()
	released, mode := l.released, l.mode
	l.released = true
	renewing := l.stopWatchdog()
	l.mu.Unlock()
	if released {
		return notHeld(l.key, "was already released")
	}
	l.cancel(errReleased)
	if renewing != nil {
		<-renewing // no renewal may run after the release
	}
	_, err := mode.release(ctx, l, false)
	return err
}

// Abandon lets go of the lock without deleting it: the watchdog stops,
// Context is cancelled, and the key stays until its TTL runs out, keeping
// others out meanwhile (waiters wake when it would expire). It is for a
// holder that must not be followed at once but need not hold on: the
// shop abandons a buyer's dedupe lock this way when it cannot tell
// whether the buyer's order was written. Like Release it works once: a
// Release after it returns ErrNotHeld without a round trip. Any goroutine
// may call it.
func (l *Lock) Abandon() {
	l.mu.Lock()
	released, mode := l.released, l.mode
	l.released = true
	renewing := l.stopWatchdog()
	l.mu.Unlock()
	if released {
		return
	}
	l.cancel(errAbandoned)
	if renewing != nil {
		<-renewing // no renewal may run after this
	}
	if a, ok := mode.(abandoner); ok {
		a.abandon(l)
	}
}
