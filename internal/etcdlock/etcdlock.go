// Package etcdlock owns the consensus lock: etcd's lock recipe (the one its
// concurrency package implements) on an etcd cluster, with dlock's handles,
// so that it plugs in wherever dlock's locks do.
//
// Each acquisition grants its own lease, the TTL, and in one transaction
// puts a key named after the lock key and the lease, "<key>/<lease>", on
// it (queue.go). The lock is held by the oldest such key, by creation
// revision; a waiter watches only the key created just before its own and
// looks again when that one is deleted, so a release wakes one waiter, not
// all of them, and waiters are served in the order they came. The handle's
// watchdog keeps the lease alive (holder.go); a lease that runs out (its
// holder paused, or cut off from a quorum of the cluster) takes the key
// with it, and the handle's Context is cancelled, as the lua lock's is.
//
// The key's creation revision is the grant's fencing token
// (dlock.Lock.Fence): within one cluster revisions only go up, so a later
// grant carries a larger one. A cluster rebuilt empty counts them from 1
// again, so every grant also carries the cluster's epoch
// (dlock.Lock.Epoch), which the same transaction reads from the key
// "dlock:epoch", creating it on the cluster's first lock; compare grants
// by (Epoch, Fence). That key has no "/", so it is never one of the queue
// keys and never inside a queue; epoch.go says why the epoch is needed and
// what it does not promise.
//
// What it needs: a quorum of the cluster's members. With fewer, no grant,
// renewal or release gets through: Lock returns dlock.ErrUnavailable when
// the cluster does not answer within its wait.
//
// etcd counts lease TTLs in whole seconds, and raises a TTL to its own
// minimum (about 1.5 election timeouts): a handle's lease is the TTL asked
// for, rounded up to a second, or the cluster's minimum if that is longer.
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
	// One attempt, but a member that hangs costs a try (see enter): give
	// it the time for a few, not forever.
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
// ErrUnavailable when the cluster does not answer within the wait: with a
// quorum gone, a request neither succeeds nor fails until it is given up.
// With wait <= 0 it makes one attempt, and reports a held lock as
// ErrTimeout.
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
			// Its keep-alives did not get through in time (a member that
			// hangs holds a request until the connection is found dead):
			// the place in the queue is lost, not the wait. Queue again.
			m.retried()
			continue
		}
		e.leave(ctx)
		if waitCtx.Err() != nil {
			// Queued behind holders the whole wait, or the queue moved just
			// before the end and the last look ran out of time.
			return nil, dlock.TimedOut(ctx, key, wait, err)
		}
		return nil, err
	}
}

// Close does nothing: a Locker keeps no background work of its own (each
// handle's watchdog ends with its Release). It is there to make Locker a
// dlock.Locker.
func (m *Locker) Close() error { return nil }
