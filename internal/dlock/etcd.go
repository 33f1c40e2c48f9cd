package dlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
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
// Context is cancelled, as the lua lock's is. The key's creation revision
// is the grant's fencing token (Lock.Fence): the cluster's revision only
// goes up, so a later grant always carries a larger one.
//
// What it needs: a quorum of the cluster's members. With fewer, no grant,
// renewal or release gets through: Lock returns ErrUnavailable when the
// cluster does not answer within its wait.
//
// etcd counts lease TTLs in whole seconds, and raises a TTL to its own
// minimum (about 1.5 election timeouts): a handle's lease is the TTL asked
// for, rounded up to a second, or the cluster's minimum if that is longer.
//
// No lock key may be another followed by "/". Etcd is safe for concurrent
// use.
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

// entry is one acquisition's place in a lock's queue: its lease, and the
// key it put on it.
type entry struct {
	m       *Etcd
	key     string // the lock key
	myKey   string // key + "/" + lease, in hex
	token   string // the value under myKey
	lease   clientv3.LeaseID
	ttl     time.Duration // the lease's TTL, as the cluster granted it
	rev     int64         // myKey's creation revision: the fence
	first   bool          // the oldest key: the lock is held
	granted time.Time     // when the grant was sent: the validity counts from it
}

// enter grants a lease for ttl and queues on key with it, in one
// transaction that also reads the oldest key queued: if that is its own,
// the lock is held.
//
// Each request gets tryTimeout, and a request that fails is tried again
// until ctx ends: a member that hangs (paused, cut off) holds a request
// sent to it until the client finds its connection dead, which gRPC's
// keep-alive does in no less than ten seconds, and the client sends the
// next request to another member. A transaction that failed may have been
// applied all the same: its lease is revoked, which takes its key out of
// the queue, and enter starts over with a new one.
func (m *Etcd) enter(ctx context.Context, key string, ttl time.Duration) (*entry, error) {
	seconds := int64((ttl + time.Second - 1) / time.Second)
	for {
		e, err := m.tryEnter(ctx, key, seconds)
		if err == nil {
			return e, nil
		}
		if ctx.Err() != nil {
			// The transaction may have queued the key before ctx ended:
			// take it out before the caller hears of the failure.
			if e != nil {
				e.leave(ctx)
			}
			return nil, err
		}
		if e != nil {
			go e.leave(ctx) // while the next try goes on
		}
		m.retried()
		if !rest(ctx) {
			return nil, err
		}
	}
}

// tryEnter is one try of enter: on error, the entry returned (if any) has
// a lease that must be left.
func (m *Etcd) tryEnter(ctx context.Context, key string, seconds int64) (*entry, error) {
	start := time.Now()
	tctx, cancel := context.WithTimeout(ctx, tryTimeout)
	g, err := m.client.Grant(tctx, seconds)
	cancel()
	if err != nil {
		return nil, etcdErr(ctx, err, "grant", key)
	}
	e := &entry{m: m, key: key, token: uuid.NewString(), lease: g.ID,
		ttl: time.Duration(g.TTL) * time.Second, granted: start}
	e.myKey = fmt.Sprintf("%s/%x", key, int64(g.ID))
	prefix := key + "/"
	tctx, cancel = context.WithTimeout(ctx, tryTimeout)
	defer cancel()
	resp, err := m.client.Txn(tctx).
		If(clientv3.Compare(clientv3.CreateRevision(e.myKey), "=", 0)).
		Then(clientv3.OpPut(e.myKey, e.token, clientv3.WithLease(g.ID)),
			clientv3.OpGet(prefix, clientv3.WithFirstCreate()...)).
		Commit()
	if err != nil {
		return e, etcdErr(ctx, err, "acquire", key)
	}
	if !resp.Succeeded { // a fresh lease's key cannot exist
		return e, fmt.Errorf("%w: acquire %q: key %s exists already", ErrUnavailable, key, e.myKey)
	}
	e.rev = resp.Header.Revision
	owner := resp.Responses[1].GetResponseRange().Kvs
	e.first = len(owner) == 0 || owner[0].CreateRevision == e.rev
	return e, nil
}

// tryTimeout bounds one request to the cluster, and retryPause separates
// the tries: see enter.
const (
	tryTimeout = 500 * time.Millisecond
	retryPause = 10 * time.Millisecond
	// tryLockTimeout bounds TryLock's tries: three, if each hangs.
	tryLockTimeout = 3 * tryTimeout
)

// errQueued is await's error when ctx ended while the entry was still
// queued behind another.
var errQueued = errors.New("dlock: still queued")

// errReleaseGaveUp is the cause of a release's end after one lease length
// without an answer.
var errReleaseGaveUp = errors.New("dlock: release gave up")

// await waits until every key queued on e.key before e's is gone, keeping
// e's lease alive meanwhile, then renews the lease once and returns when
// that renewal was sent: the validity counts from it. It returns an error
// wrapping errQueued when ctx ends first, and ErrNotHeld if e's lease ran
// out while it waited.
func (e *entry) await(ctx context.Context) (time.Time, error) {
	// A lease lost while waiting ends the wait at once: the key went with
	// it, and its place in the queue is gone.
	wctx, stop := context.WithCancel(ctx)
	kept := make(chan error, 1)
	go func() {
		err := e.keepAlive(wctx)
		if err != nil {
			stop()
		}
		kept <- err
	}()
	err := e.untilFirst(wctx)
	stop()
	if kerr := <-kept; kerr != nil {
		return time.Time{}, kerr
	}
	if err != nil {
		return time.Time{}, err
	}
	for {
		start := time.Now()
		_, err := e.renew(ctx)
		switch {
		case err == nil:
			return start, nil
		case errors.Is(err, ErrNotHeld), ctx.Err() != nil:
			return time.Time{}, err
		}
		if !rest(ctx) {
			return time.Time{}, err
		}
	}
}

// untilFirst returns once no key on e.key is older than e's. It watches
// only the youngest of the older keys (its predecessor) until that is
// deleted, then looks again: the predecessor may have left the queue
// without holding the lock.
func (e *entry) untilFirst(ctx context.Context) error {
	prefix := e.key + "/"
	for {
		opts := append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(e.rev-1))
		tctx, cancel := context.WithTimeout(ctx, tryTimeout)
		resp, err := e.m.client.Get(tctx, prefix, opts...)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return queuedErr(ctx, err, e.key)
			}
			if !rest(ctx) {
				return queuedErr(ctx, err, e.key)
			}
			continue // a member that hangs, or lost its leader: ask again
		}
		if len(resp.Kvs) == 0 {
			return nil
		}
		if err := e.untilDeleted(ctx, string(resp.Kvs[0].Key), resp.Header.Revision); err != nil {
			return err
		}
	}
}

// untilDeleted watches key from after revision rev until it is deleted.
// The watch requires a leader: a member cut off from the quorum ends it
// rather than keep it open with no news, and untilDeleted returns nil for
// the caller to look again (an election is not a reason to give up).
//
// It watches for one lease's length at most, then returns nil, for the
// caller to look again: a watch served by a member that hangs would never
// say anything, and the predecessor's lease has run out by then unless it
// is kept alive.
func (e *entry) untilDeleted(ctx context.Context, key string, rev int64) error {
	wctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx), e.ttl)
	defer cancel() // ends the watch
	for wr := range e.m.client.Watch(wctx, key, clientv3.WithRev(rev+1), clientv3.WithFilterPut()) {
		if err := wr.Err(); err != nil {
			if ctx.Err() != nil {
				return queuedErr(ctx, err, e.key)
			}
			// The lease's length has passed, or the member lost its leader
			// (an election, a member stopped): look again, after a pause if
			// the cluster is not answering, as untilFirst does for a Get.
			// Only the wait running out gives the place in the queue up.
			if wctx.Err() == nil && !rest(ctx) {
				return queuedErr(ctx, err, e.key)
			}
			return nil
		}
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return nil
			}
		}
	}
	if ctx.Err() == nil {
		return nil // the lease's length has passed: look again
	}
	return queuedErr(ctx, ctx.Err(), e.key)
}

// queuedErr is the error of a waiting request that failed: errQueued if
// ctx ended (the wait ran out, or the caller's ctx ended), the request's
// error otherwise.
func queuedErr(ctx context.Context, err error, key string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %q: %w", errQueued, key, ctx.Err())
	}
	return etcdErr(ctx, err, "wait", key)
}

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

// leave takes e out of the queue: revoking the lease deletes its key, and
// the waiter behind it looks again. An error is not returned: a lease not
// revoked runs out by its TTL.
//
// It waits for the revoke at most one request's time, and never past ctx's
// deadline (a caller that gives up must not be held up by its clean-up);
// a revoke that has not answered by then (no quorum) goes on in the
// background for at most the lease's TTL, after which the lease is gone
// anyway.
func (e *entry) leave(ctx context.Context) {
	wait := tryTimeout
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(e.ttl, time.Second))
		defer cancel()
		_, _ = e.m.client.Revoke(rctx, e.lease)
	}()
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
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
	l.fence = e.rev // set before anyone but this goroutine has l
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
