package dlock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// watchdog is a handle's renewal schedule (lua, fenced and redlock): a timer that
// fires every ttl/3, never later than the validity runs out, and renews the
// lock for another ttl. It costs no goroutine between renewals, so a short
// critical section, released before the first renewal, pays for nothing
// but a timer. Its fields are guarded by the Lock's mu.
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

// HoldRenewals is fault injection, for the lesson of the late commit: for d
// from now, the watchdog sends no renewal, as if the holder's network had
// stalled and dropped them (a Refresh still goes out). If the validity runs
// out meanwhile, Context is cancelled as for any lost lock, with a cause
// that wraps ErrNotHeld and says renewals were held back; once d has
// passed, the watchdog renews on its schedule again, and finds the lock
// gone if it expired. A later call may extend the hold, never shorten it.
// With d <= 0, and on a handle without a watchdog (naive, off), it does
// nothing. It is safe for concurrent use.
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

// startWatchdog schedules the first renewal: in ttl/3, or sooner if the
// acquire took most of the TTL (see nextRenewal), since once the validity
// has run out the lock is not sure to be held.
func (l *Lock) startWatchdog() {
	l.mu.Lock() // the renewal may fire before the assignment is done
	defer l.mu.Unlock()
	l.dog.timer = time.AfterFunc(l.nextRenewal(false), l.renewal)
}

// nextRenewal returns how long until the watchdog is due: ttl/3, or ttl/10
// after a failed renewal; but with less validity left than that, at half of
// what is left, so that a renewal still has time to answer (under a
// millisecond: when it runs out, and the context is cancelled unless a
// renewal has extended the lock by then). Called with l.mu held.
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

// renewal is one tick of the watchdog. If the last known validity has run
// out without a successful renewal, or a renewal finds the lock gone, it
// cancels the lock's context with an error wrapping ErrNotHeld; otherwise
// it schedules the next tick (see nextRenewal). It stops once the lock is
// released or its context ends.
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

// renew refreshes the lock for the watchdog, but waits for the answer only
// until the validity runs out, as it stands while waiting (a Refresh may
// move it): a hung Redis must not keep the work going past the time the
// lock is sure to be held. The call itself is given until, the validity at
// the start, and ends when the client gives up on it.
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
