package dlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ModeEtcd is the consensus lock (NewEtcd). It is not one of Modes: New
// builds lockers on Redis clients, and this one needs an etcd client.
const ModeEtcd Mode = "etcd"

// Etcd is the consensus lock: etcd's lock recipe (the one its concurrency
// package implements), with dlock's handles.
//
// Each acquisition grants its own lease, the TTL, and in one transaction
// puts a key named after the lock key and the lease, "<key>/<lease>", on
// it. The lock is held by the oldest such key, by creation revision; a
// waiter watches only the key created just before its own and looks again
// when that one is deleted, so a release wakes one waiter, not all of
// them, and waiters are served in the order they came. The watchdog keeps
// the lease alive; a lease that runs out (its holder paused, or cut off
// from a quorum of the cluster) takes the key with it, and the handle's
// Context is cancelled, as the lua lock's is.
//
// The key's creation revision is the grant's fencing token (Lock.Fence):
// within one cluster revisions only go up, so a later grant carries a
// larger one. A cluster rebuilt empty counts them from 1 again, so every
// grant also carries the cluster's epoch (Lock.Epoch), which the same
// transaction reads from the key "dlock:epoch", creating it on the
// cluster's first lock; compare grants by (Epoch, Fence). That key has no
// "/", so it is never one of the queue keys and never inside a queue;
// etcd_epoch.go says why the epoch is needed and what it does not promise.
//
// What it needs: a quorum of the cluster's members. With fewer, no grant,
// renewal or release gets through: Lock returns ErrUnavailable when the
// cluster does not answer within its wait.
//
// etcd counts lease TTLs in whole seconds, and raises a TTL to its own
// minimum (about 1.5 election timeouts): a handle's lease is the TTL asked
// for, rounded up to a second, or the cluster's minimum if that is longer.
//
// No lock key may be another followed by "/", and nothing but dlock may
// write "dlock:epoch". Etcd is safe for concurrent use.
type Etcd struct {
	client *clientv3.Client
	obs    Observer // nil: nobody listens (see Observe)
}

// NewEtcd returns an etcd locker on c, which must not be nil and stays the
// caller's to close, after the last handle is released.
func NewEtcd(c *clientv3.Client) *Etcd { return &Etcd{client: c} }

// TryLock makes one attempt: it returns ErrNotObtained if someone holds
// key or waits for it, and ErrUnavailable if the cluster cannot be
// reached. The handle's watchdog runs until Release or until ctx ends.
func (m *Etcd) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	if err := checkTTL(ttl); err != nil {
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
		return nil, fmt.Errorf("%w: %q: etcd did not answer within %v: %w", ErrUnavailable, key, tryLockTimeout, err)
	default:
		return nil, err
	}
	if !e.first {
		e.leave(ctx)
		return nil, fmt.Errorf("%w: %q", ErrNotObtained, key)
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
func (m *Etcd) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	if wait <= 0 {
		l, err := m.TryLock(ctx, key, ttl)
		if errors.Is(err, ErrNotObtained) {
			return nil, timeoutErr(ctx, key, wait, err)
		}
		return l, err
	}
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		e, err := m.enter(waitCtx, key, ttl)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil, timeoutErr(ctx, key, wait, err)
		case waitCtx.Err() != nil: // a healthy cluster answers in milliseconds
			return nil, fmt.Errorf("%w: %q: etcd did not answer within the %v wait: %w", ErrUnavailable, key, wait, err)
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
		case errors.Is(err, ErrNotHeld) && waitCtx.Err() == nil:
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
			return nil, timeoutErr(ctx, key, wait, err)
		}
		return nil, err
	}
}

// Close does nothing: an Etcd locker keeps no background work of its own
// (each handle's watchdog ends with its Release). It is there to make Etcd
// a Locker.
func (m *Etcd) Close() error { return nil }

// tryTimeout bounds one request to the cluster, and retryPause separates
// the tries: see enter.
const (
	tryTimeout = 500 * time.Millisecond
	retryPause = 10 * time.Millisecond
	// tryLockTimeout bounds TryLock's tries: three, if each hangs.
	tryLockTimeout = 3 * tryTimeout
)

// errReleaseGaveUp is the cause of a release's end after one lease length
// without an answer.
var errReleaseGaveUp = errors.New("dlock: release gave up")

// keepAlive renews e's lease every third of its TTL until ctx ends, and
// returns nil then; it returns ErrNotHeld if the lease ran out.
func (e *entry) keepAlive(ctx context.Context) error {
	t := time.NewTicker(e.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := e.renew(ctx); errors.Is(err, ErrNotHeld) {
			return err
		}
	}
}

// renew sends one keep-alive for e's lease and returns the TTL it got.
//
// It gives the call a quarter of the lease: a member that hangs (paused,
// cut off) holds a request until the client finds its connection dead,
// seconds later, and the keep-alive sent after this one should go to
// another member well before the lease runs out.
func (e *entry) renew(ctx context.Context) (time.Duration, error) {
	tctx, cancel := context.WithTimeout(ctx, e.ttl/4)
	defer cancel()
	resp, err := e.m.client.KeepAliveOnce(tctx, e.lease)
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return 0, notHeld(e.key, "its lease ran out")
	case err != nil:
		return 0, etcdErr(ctx, err, "keep alive", e.key) // unavailable, unless ctx ended
	case resp.TTL <= 0:
		return 0, notHeld(e.key, "its lease ran out")
	}
	return time.Duration(resp.TTL) * time.Second, nil
}

// lock returns the handle of e, held since the lease was last renewed at
// since: valid for the lease's TTL from then.
func (e *entry) lock(ctx context.Context, since time.Time) (*Lock, error) {
	until := since.Add(e.ttl)
	if !time.Now().Before(until) { // the grant took the whole lease
		e.leave(ctx)
		return nil, fmt.Errorf("%w: %q: the acquire took longer than the %v lease", ErrUnavailable, e.key, e.ttl)
	}
	l := newLock(ctx, e.key, e.token, e.ttl, until, (*etcdHolder)(e), true)
	l.fence, l.epoch = e.rev, e.epoch // set before anyone but this goroutine has l
	return l, nil
}

// etcdHolder is an entry that holds the lock: how its handle renews and
// lets go.
type etcdHolder entry

// refresh renews the lease. etcd keeps a lease's TTL from its grant, so
// ttl is not sent: the validity is the lease's TTL from now.
func (h *etcdHolder) refresh(ctx context.Context, l *Lock, ttl time.Duration) (time.Duration, error) {
	return (*entry)(h).renew(ctx)
}

// release revokes the lease, which deletes the key in the same step and
// wakes the waiter watching it. Each try gets tryTimeout, as enter's
// requests do; a lease found gone after a try that timed out was revoked by
// that try. It tries for one lease length at most (by then the lease has
// run out by itself) and returns ErrUnavailable if no try got through.
func (h *etcdHolder) release(ctx context.Context, l *Lock) error {
	ctx, cancel := context.WithTimeoutCause(ctx, max(h.ttl, time.Second), errReleaseGaveUp)
	defer cancel()
	timedOut := false
	for {
		tctx, cancel := context.WithTimeout(ctx, tryTimeout)
		_, err := h.m.client.Revoke(tctx, h.lease)
		cancel()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, rpctypes.ErrLeaseNotFound) && timedOut:
			return nil
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			return notHeld(h.key, "its lease had run out")
		}
		timedOut = timedOut || tctx.Err() != nil
		if ctx.Err() == nil && rest(ctx) {
			continue
		}
		if errors.Is(context.Cause(ctx), errReleaseGaveUp) {
			return fmt.Errorf("%w: release %q: no answer within the %v lease, which runs out by itself: %w",
				ErrUnavailable, h.key, h.ttl, err)
		}
		return etcdErr(ctx, err, "release", h.key)
	}
}

// etcdErr translates an error from an etcd request about key, as redisErr
// does for Redis: ctx's end, or ErrUnavailable with the cause.
func etcdErr(ctx context.Context, err error, op, key string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("dlock: %s %q: %w", op, key, err)
	}
	return fmt.Errorf("%w: %s %q: %w", ErrUnavailable, op, key, err)
}

// rest waits retryPause before the next try, and reports whether ctx is
// still live then.
func rest(ctx context.Context) bool {
	sleep(ctx, retryPause, nil) // wait.go's, with nothing to wake it early
	return ctx.Err() == nil
}
