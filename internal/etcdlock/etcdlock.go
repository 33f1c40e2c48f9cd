// Package etcdlock owns the consensus lock: etcd's lock recipe (as its
// concurrency package implements it) with dlock's handles.
//
// Each acquisition grants its own lease and, in one transaction, puts
// "<key>/<lease>" on it (queue.go). The oldest such key by creation
// revision holds the lock; a waiter watches only the key just before its
// own, so a release wakes one waiter and waiters are served in order. The
// handle's watchdog keeps the lease alive (holder.go); a lease that runs out
// takes the key with it and cancels the handle's Context.
//
// The key's creation revision is the fence (dlock.Lock.Fence), beside the
// cluster's epoch (dlock.Lock.Epoch, epoch.go): compare grants by (Epoch,
// Fence). It needs a quorum of the cluster: without one, Lock returns
// dlock.ErrUnavailable once its wait runs out. etcd counts lease TTLs in
// whole seconds, with a minimum of its own: the lease is the TTL rounded up
// to a second, or that minimum if longer.
package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/dlock"
)

// Mode is the name of this lock among dlock's modes. dlock.New does not
// build it: it needs an etcd client (New).
const Mode dlock.Mode = "etcd"

// Locker takes locks on an etcd cluster. It implements dlock.Locker: the
// errors are dlock's (ErrTimeout, ErrNotObtained, ErrNotHeld,
// ErrUnavailable). No lock key may be another followed by "/", and nothing
// but this package may write "dlock:epoch". TryLock, Lock and Close are
// safe for concurrent use; Observe must come before the first of them.
type Locker struct {
	client *clientv3.Client
	obs    dlock.Observer // nil: nobody listens (see Observe)
}

var _ dlock.Locker = (*Locker)(nil)

// New returns an etcd locker on c, which must not be nil and stays the
// caller's to close, after the last handle is released.
func New(c *clientv3.Client) *Locker { return &Locker{client: c} }

// Observe makes m report to o each request it sends again and each waiter
// that queues anew (dlock.Observe calls it). Call it before m's first use.
func (m *Locker) Observe(o dlock.Observer) { m.obs = o }

// retried tells m's observer, if any, that a Lock tries again.
func (m *Locker) retried() {
	if m.obs != nil {
		m.obs.Retried()
	}
}

// TryLock makes one attempt: it returns ErrNotObtained if someone holds
// key or waits for it, and ErrUnavailable if the cluster cannot be
// reached. The handle's watchdog runs until Release or until ctx ends.
func (m *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (*dlock.Lock, error) {
	if err := dlock.CheckTTL(ttl); err != nil {
		return nil, err
	}
	// One attempt, but a hung member costs a try (see enter): allow a few.
	tryCtx, cancel := context.WithTimeout(ctx, tryLockTimeout)
	defer cancel()
	e, err := m.enter(tryCtx, key, ttl)
	switch {
	case err == nil:
	case ctx.Err() == nil && tryCtx.Err() != nil:
		return nil, fmt.Errorf("%w: %q: etcd did not answer within %v: %w", dlock.ErrUnavailable, key, tryLockTimeout, err)
	default:
		return nil, err
	}
	if !e.first {
		e.leave(ctx)
		return nil, fmt.Errorf("%w: %q", dlock.ErrNotObtained, key)
	}
	return e.lock(ctx, e.granted)
}

// Lock takes key, waiting at most wait behind the holder and the waiters
// queued before it, and never past ctx's deadline. It returns ErrTimeout
// when the wait runs out (wrapping ctx.Err() when ctx ended it), and
// ErrUnavailable when the cluster does not answer within the wait. With
// wait <= 0 it makes one attempt, and reports a held lock as ErrTimeout.
func (m *Locker) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*dlock.Lock, error) {
	if wait <= 0 {
		l, err := m.TryLock(ctx, key, ttl)
		if errors.Is(err, dlock.ErrNotObtained) {
			return nil, dlock.TimedOut(ctx, key, wait, err)
		}
		return l, err
	}
	if err := dlock.CheckTTL(ttl); err != nil {
		return nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		e, err := m.enter(waitCtx, key, ttl)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil, dlock.TimedOut(ctx, key, wait, err)
		case waitCtx.Err() != nil: // a healthy cluster answers in milliseconds
			return nil, fmt.Errorf("%w: %q: etcd did not answer within the %v wait: %w", dlock.ErrUnavailable, key, wait, err)
		default:
			return nil, err
		}
		if e.first {
			return e.lock(ctx, e.granted)
		}
		renewed, err := e.await(waitCtx)
		switch {
		case err == nil:
			return e.lock(ctx, renewed)
		case errors.Is(err, dlock.ErrNotHeld) && waitCtx.Err() == nil:
			// Its keep-alives did not get through in time: the place in the
			// queue is lost, not the wait. Queue again.
			m.retried()
			continue
		}
		e.leave(ctx)
		if waitCtx.Err() != nil {
			// Queued the whole wait, or the last look ran out of time.
			return nil, dlock.TimedOut(ctx, key, wait, err)
		}
		return nil, err
	}
}

// Close does nothing: each handle's watchdog ends with its Release.
func (m *Locker) Close() error { return nil }
