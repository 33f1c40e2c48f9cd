package dlock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// watchdog is a handle's renewal schedule (lua, fenced, redlock): a timer
// that renews the lock every ttl/3, never later than the validity runs out,
// with no goroutine between renewals. Guarded by the Lock's mu.
type watchdog struct {
	timer    *time.Timer   // nil without a watchdog
	renewing chan struct{} // while a renewal runs: closed when it ends
	lastErr  error         // the last renewal's error, nil if it worked
	moved    chan struct{} // while a renewal waits: closed when validUntil changes
	heldTill time.Time     // no renewal is sent before then (HoldRenewals)
}

// errNoAnswer is a renewal's error when Redis did not answer it before the
// validity ran out.
var errNoAnswer = errors.New("dlock: no answer before the validity ran out")

// errHeldBack is a renewal's error while HoldRenewals holds renewals back.
var errHeldBack = errors.New("dlock: renewal held back")

// HoldRenewals is fault injection for the late-commit lesson: for d from
// now the watchdog sends no renewal, as if the network had stalled (a
// Refresh still goes out). If the validity runs out meanwhile, Context is
// cancelled (cause wrapping ErrNotHeld). A later call may extend the hold,
// never shorten it. It does nothing for d <= 0 or without a watchdog. It
// is safe for concurrent use.
func (l *Lock) HoldRenewals(d time.Duration) {
	if d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if till := time.Now().Add(d); till.After(l.dog.heldTill) {
		l.dog.heldTill = till
	}
}

// startWatchdog schedules the first renewal (nextRenewal).
func (l *Lock) startWatchdog() {
	l.mu.Lock() // the renewal may fire before the assignment is done
	defer l.mu.Unlock()
	l.dog.timer = time.AfterFunc(l.nextRenewal(false), l.renewal)
}

// nextRenewal returns how long until the next renewal: ttl/3 (ttl/10 after
// a failure), but at most half the validity left, so a renewal still has
// time to answer. Called with l.mu held.
func (l *Lock) nextRenewal(failed bool) time.Duration {
	next := l.ttl / 3
	if failed {
		next = l.ttl / 10 // retry a failed renewal sooner
	}
	left := time.Until(l.validUntil)
	if left/2 < time.Millisecond {
		return min(next, max(left, 0))
	}
	return min(next, left/2)
}

// rescheduleWatchdog moves the next renewal after a Refresh has changed the
// TTL or the validity. A renewal under way schedules the next one itself
// when it ends. Called with l.mu held.
func (l *Lock) rescheduleWatchdog() {
	if l.dog.timer == nil || l.dog.renewing != nil || l.released || l.ctx.Err() != nil {
		return
	}
	l.dog.timer.Reset(l.nextRenewal(false))
}

// setValidUntil records a new validity and tells a renewal waiting for its
// answer. Called with l.mu held.
func (l *Lock) setValidUntil(t time.Time) {
	l.validUntil = t
	if l.dog.moved != nil {
		close(l.dog.moved)
		l.dog.moved = nil
	}
}

// stopWatchdog cancels the next renewal and returns a channel that is closed
// when the renewal running now, if any, has ended (nil if none runs).
// Called with l.mu held, after marking l released.
func (l *Lock) stopWatchdog() <-chan struct{} {
	if l.dog.timer == nil {
		return nil
	}
	l.dog.timer.Stop()
	return l.dog.renewing
}

// renewal is one tick of the watchdog: it renews the lock, or cancels its
// context (cause wrapping ErrNotHeld) if the lock is lost or the validity
// ran out, then schedules the next tick unless released or lost.
func (l *Lock) renewal() {
	l.mu.Lock()
	if l.released || l.ctx.Err() != nil || l.dog.renewing != nil {
		l.mu.Unlock()
		return // released, lost, or a renewal is under way: it schedules the next
	}
	done := make(chan struct{})
	l.dog.renewing = done
	ttl, until, lastErr := l.ttl, l.validUntil, l.dog.lastErr
	held := time.Now().Before(l.dog.heldTill)
	l.mu.Unlock()
	if held {
		lastErr = errHeldBack // this tick's renewal is dropped too
	}

	var err error
	switch {
	case !time.Now().Before(until):
		err = validityRanOut(l.key, lastErr)
		l.cancel(err)
	case held:
		err = errHeldBack // a failed renewal that sent nothing: retried soon
	default:
		err = l.renew(ttl, until)
	}

	l.mu.Lock()
	l.dog.renewing, l.dog.lastErr = nil, err
	if !l.released && l.ctx.Err() == nil { // not lost, not released
		l.dog.timer.Reset(l.nextRenewal(err != nil))
	}
	l.mu.Unlock()
	close(done)
}

// validityRanOut is the cause of a context cancelled because the validity
// ran out before a renewal extended the lock; lastErr is the last
// renewal's error, nil if none was tried since the last that worked.
func validityRanOut(key string, lastErr error) error {
	switch {
	case lastErr == nil:
		return fmt.Errorf("%w: %q: validity ran out before the watchdog could renew it", ErrNotHeld, key)
	case errors.Is(lastErr, errNoAnswer):
		return fmt.Errorf("%w: %q: validity ran out before a renewal answered", ErrNotHeld, key)
	case errors.Is(lastErr, errHeldBack):
		return fmt.Errorf("%w: %q: validity ran out while renewals were held back", ErrNotHeld, key)
	default:
		return fmt.Errorf("%w: %q: validity ran out while renewals failed: %v", ErrNotHeld, key, lastErr)
	}
}

// renew refreshes the lock for the watchdog, waiting for the answer only
// until the validity (as it stands, a Refresh may move it) runs out: a
// hung Redis must not keep the work going unprotected.
func (l *Lock) renew(ttl time.Duration, until time.Time) error {
	ctx, cancel := context.WithDeadline(l.ctx, until)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.refresh(ctx, ttl) }()
	for {
		l.mu.Lock()
		valid := l.validUntil
		if l.dog.moved == nil {
			l.dog.moved = make(chan struct{})
		}
		moved := l.dog.moved
		l.mu.Unlock()
		timer := time.NewTimer(time.Until(valid))
		select {
		case err := <-done:
			timer.Stop()
			if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return errNoAnswer // the call ran out of time, whatever it says
			}
			return err
		case <-moved: // a reply changed the validity: wait as long as it says
			timer.Stop()
		case <-timer.C:
			if !time.Now().Before(l.until()) {
				return errNoAnswer
			}
		case <-l.ctx.Done():
			timer.Stop()
			if cause := context.Cause(l.ctx); errors.Is(cause, ErrNotHeld) {
				return cause
			}
			return l.ctx.Err()
		}
	}
}
