package dlock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// watchdog is a handle's renewal schedule (lua and redlock): a timer that
// fires every ttl/3 and renews the lock for another ttl. It costs no
// goroutine between renewals, so a short critical section, released before
// the first renewal, pays for nothing but a timer. Its fields are guarded
// by the Lock's mu.
type watchdog struct {
	timer    *time.Timer   // nil without a watchdog
	renewing chan struct{} // while a renewal runs: closed when it ends
	lastErr  error         // the last renewal's error, nil if it worked
}

// startWatchdog schedules the first renewal.
func (l *Lock) startWatchdog() {
	l.mu.Lock() // the renewal may fire before the assignment is done
	defer l.mu.Unlock()
	l.dog.timer = time.AfterFunc(l.ttl/3, l.renewal)
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
// it schedules the next tick: in ttl/3, or sooner after a failure. It stops
// once the lock is released or its context ends.
func (l *Lock) renewal() {
	l.mu.Lock()
	if l.released || l.ctx.Err() != nil {
		l.mu.Unlock()
		return
	}
	done := make(chan struct{})
	l.dog.renewing = done
	ttl, until, lastErr := l.ttl, l.validUntil, l.dog.lastErr
	l.mu.Unlock()

	var err error
	if time.Now().Before(until) {
		err = l.renew(ttl, until)
	} else {
		err = fmt.Errorf("%w: %q: validity ran out while renewals failed: %v", ErrNotHeld, l.key, lastErr)
		l.cancel(err)
	}

	l.mu.Lock()
	l.dog.renewing, l.dog.lastErr = nil, err
	if !l.released && l.ctx.Err() == nil { // not lost, not released
		next := l.ttl / 3
		if err != nil {
			next = l.ttl / 10 // retry a failed renewal sooner
		}
		l.dog.timer.Reset(min(next, time.Until(l.validUntil)))
	}
	l.mu.Unlock()
	close(done)
}

// renew refreshes the lock for the watchdog, but waits for the answer only
// until the validity runs out: a hung Redis must not keep the work going
// past the time the lock is sure to be held. (The call itself ends when the
// client gives up on it.)
func (l *Lock) renew(ttl time.Duration, until time.Time) error {
	ctx, cancel := context.WithDeadline(l.ctx, until)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.refresh(ctx, ttl) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if errors.Is(context.Cause(l.ctx), ErrNotHeld) {
			return context.Cause(l.ctx)
		}
		return ctx.Err()
	}
}
