package dlock

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Lock is one acquisition of a lock: its key, the token that proves
// ownership, and how its mode refreshes and releases it. It is safe for
// concurrent use. The caller must call Release when the work is done, also
// after the lock was lost, and should do the work under Context.
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

// holder is what each mode adds to a handle: how it renews and lets go,
// both leaving a lock that is no longer this handle's alone (but naive).
type holder interface {
	// refresh extends the lock to ttl and returns its validity, measured
	// from before the call was sent; ErrNotHeld if the lock is gone.
	refresh(ctx context.Context, l *Lock, ttl time.Duration) (time.Duration, error)
	// release lets go of the lock (ErrNotHeld if it had expired), announcing
	// it on waitroom.Channel unless quiet, and reports whether it announced.
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

// Token returns the value stored under the key: a fresh UUID (lua,
// fenced, redlock, etcd), the constant "1" (naive, the flaw) or "" (off).
func (l *Lock) Token() string { return l.token }

// Context returns the context to do the protected work under, derived from
// TryLock's or Lock's ctx. Release cancels it, and so does a watchdog that
// finds the lock lost, with a cause wrapping ErrNotHeld: then stop the work.
func (l *Lock) Context() context.Context { return l.ctx }

// Validity returns how much longer the lock is sure to be held: the TTL less
// the acquire or refresh time (and redlock's drift), counted down; 0 after.
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
// (etcd keeps its lease's TTL). It returns ErrNotHeld (and cancels Context)
// if the lock is gone or was released, ErrUnavailable if the server cannot
// be reached, and errors.ErrUnsupported for naive. Later watchdog renewals
// use the new ttl. Any goroutine may call it, also during Release.
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
		// It may have landed anyway: a shorter TTL ends the validity sooner.
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
	// A Refresh and a renewal may answer out of order: the one sent last
	// sets the TTL and validity; an older reply may only shorten it.
	if until := start.Add(validity); seq > l.applied {
		l.applied, l.ttl = seq, ttl
		l.setValidUntil(until)
	} else if until.Before(l.validUntil) {
		l.setValidUntil(until)
	}
	l.rescheduleWatchdog()
	return nil
}

// Release lets go of the lock and cancels Context; a second call returns
// ErrNotHeld without a round trip. It returns ErrNotHeld if the lock had
// expired or been taken over (only naive deletes the new holder's key) and
// ErrUnavailable if the server cannot be reached (the lock then expires).
// After the work was cancelled, pass a live ctx (context.WithoutCancel).
// Any goroutine may call it.
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
// Context is cancelled and the key keeps others out until its TTL runs out.
// The shop abandons a dedupe lock this way when it cannot tell whether the
// order was written. A Release after it returns ErrNotHeld. Any goroutine
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
