package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/dlock"
)

// An etcd lock's queue: how an acquisition enters it (a lease and a key on
// it, in one transaction), waits in it (watching only the key queued just
// before its own until it is deleted), and leaves it. Locker (etcdlock.go)
// holds the lock once an entry is first in its queue.

// entry is one acquisition's place in a lock's queue: its lease, and the
// key it put on it.
type entry struct {
	m       *Locker
	key     string // the lock key
	myKey   string // key + "/" + lease, in hex
	token   string // the value under myKey
	lease   clientv3.LeaseID
	ttl     time.Duration // the lease's TTL, as the cluster granted it
	rev     int64         // myKey's creation revision: the fence
	epoch   int64         // the cluster's epoch, read with rev (epoch.go)
	first   bool          // the oldest key: the lock is held
	granted time.Time     // when the grant was sent: the validity counts from it
}

// enter grants a lease for ttl and queues on key with it, in one
// transaction that also reads the oldest key queued (if that is its own,
// the lock is held) and the cluster's epoch.
//
// Each request gets tryTimeout, and a request that fails is tried again
// until ctx ends: a member that hangs (paused, cut off) holds a request
// sent to it until the client finds its connection dead, which gRPC's
// keep-alive does in no less than ten seconds, and the client sends the
// next request to another member. A transaction that failed may have been
// applied all the same: its lease is revoked, which takes its key out of
// the queue, and enter starts over with a new one. An epoch key that does
// not hold an epoch is not tried again: enter returns that error at once.
func (m *Locker) enter(ctx context.Context, key string, ttl time.Duration) (*entry, error) {
	seconds := int64((ttl + time.Second - 1) / time.Second)
	for {
		e, err := m.tryEnter(ctx, key, seconds)
		if err == nil {
			return e, nil
		}
		if ctx.Err() != nil || errors.Is(err, errBadEpoch) {
			// The transaction may have queued the key (before ctx ended),
			// or did (with a bad epoch): take it out before the caller
			// hears of the failure.
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
func (m *Locker) tryEnter(ctx context.Context, key string, seconds int64) (*entry, error) {
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
	ops := append([]clientv3.Op{
		clientv3.OpPut(e.myKey, e.token, clientv3.WithLease(g.ID)),
		clientv3.OpGet(prefix, clientv3.WithFirstCreate()...),
	}, epochOps(start)...)
	resp, err := m.client.Txn(tctx).
		If(clientv3.Compare(clientv3.CreateRevision(e.myKey), "=", 0)).
		Then(ops...).
		Commit()
	if err != nil {
		return e, etcdErr(ctx, err, "acquire", key)
	}
	if !resp.Succeeded { // a fresh lease's key cannot exist
		return e, fmt.Errorf("%w: acquire %q: key %s exists already", dlock.ErrUnavailable, key, e.myKey)
	}
	e.rev = resp.Header.Revision
	owner := resp.Responses[1].GetResponseRange().Kvs
	e.first = len(owner) == 0 || owner[0].CreateRevision == e.rev
	e.epoch, err = readEpoch(resp.Responses[len(resp.Responses)-1], key)
	return e, err
}

// errQueued is await's error when ctx ended while the entry was still
// queued behind another.
var errQueued = errors.New("etcdlock: still queued")

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
		case errors.Is(err, dlock.ErrNotHeld), ctx.Err() != nil:
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
