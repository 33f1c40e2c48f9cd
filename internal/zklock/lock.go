package zklock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
)

// tryLockWithin bounds TryLock: a healthy ensemble answers in
// milliseconds, one that has lost its quorum not at all, and the client
// waits for an answer as long as it is let.
const tryLockWithin = 1500 * time.Millisecond

// TryLock makes one attempt: it queues on key and, unless first, leaves
// again and returns dlock.ErrNotObtained. It returns dlock.ErrUnavailable if
// the ensemble does not answer within tryLockWithin, an error wrapping
// ctx.Err() if ctx ends first, and ErrClosed after Close. ttl must be at
// least 1ms and is otherwise unused (the session is the lease).
func (m *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (*dlock.Lock, error) {
	if err := m.check(ttl); err != nil {
		return nil, err
	}
	tryCtx, cancel := context.WithTimeout(ctx, tryLockWithin)
	defer cancel()
	l, err := m.acquire(ctx, tryCtx, key, false)
	switch {
	case err == nil:
		return l, nil
	case errors.Is(err, errNotFirst):
		return nil, fmt.Errorf("%w: %q", dlock.ErrNotObtained, key)
	case ctx.Err() == nil && tryCtx.Err() != nil:
		return nil, fmt.Errorf("%w: %q: ZooKeeper did not answer within %v: %w", dlock.ErrUnavailable, key, tryLockWithin, err)
	}
	return nil, err
}

// Lock takes key, waiting at most wait behind the holder and earlier
// waiters, and never past ctx's deadline. When the wait runs out it deletes
// its node and returns dlock.ErrTimeout (wrapping ctx.Err() if ctx ended
// it); dlock.ErrUnavailable if the ensemble does not answer within it. With
// wait <= 0 it is TryLock, a held lock reported as dlock.ErrTimeout.
func (m *Locker) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*dlock.Lock, error) {
	if wait <= 0 {
		l, err := m.TryLock(ctx, key, ttl)
		if errors.Is(err, dlock.ErrNotObtained) {
			return nil, timeoutErr(ctx, key, wait, err)
		}
		return l, err
	}
	if err := m.check(ttl); err != nil {
		return nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	l, err := m.acquire(ctx, waitCtx, key, true)
	switch {
	case err == nil:
		return l, nil
	case ctx.Err() != nil, errors.Is(err, errQueued):
		return nil, timeoutErr(ctx, key, wait, err)
	case waitCtx.Err() != nil: // a healthy ensemble answers in milliseconds
		return nil, fmt.Errorf("%w: %q: ZooKeeper did not answer within the %v wait: %w", dlock.ErrUnavailable, key, wait, err)
	}
	return nil, err
}

// acquire queues on key and waits, within waitCtx, until its node is first
// (with wait unset, looks once); it queues again if its session ended, and
// deletes its node on any other error. The handle's Context derives from ctx.
func (m *Locker) acquire(ctx, waitCtx context.Context, key string, wait bool) (*dlock.Lock, error) {
	for {
		e, err := m.enter(waitCtx, key)
		if err != nil {
			return nil, err
		}
		err = e.await(waitCtx, wait)
		var l *dlock.Lock
		if err == nil {
			l, err = e.grant(waitCtx, ctx)
		}
		switch {
		case err == nil:
			return l, nil
		case !errors.Is(err, errGone):
			e.leave(ctx)
			return nil, err
		}
		m.retried()
	}
}

// check rejects a call after Close, and a ttl under a millisecond.
func (m *Locker) check(ttl time.Duration) error {
	if m.closed() {
		return ErrClosed
	}
	return checkTTL(ttl)
}
