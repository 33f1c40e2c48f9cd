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

// An etcd lock's queue: enter it (a lease and a key, in one transaction),
// wait in it (watching the key just before), leave it.

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
// transaction that also reads the oldest key queued (its own: the lock is
// held) and the cluster's epoch. Each request gets tryTimeout and is tried
// again until ctx ends, since a hung member holds a request until the
// client finds the connection dead. A failed transaction may have applied:
// its lease is revoked and enter starts over. A bad epoch fails at once.
func (m *Locker) enter(ctx context.Context, key string, ttl time.Duration) (*entry, error) {
	seconds := int64((ttl + time.Second - 1) / time.Second)
	for {
		e, err := m.tryEnter(ctx, key, seconds)
		if err == nil {
			return e, nil
		}
		if ctx.Err() != nil || errors.Is(err, errBadEpoch) {
			// The key may be queued (before ctx ended, or with a bad
			// epoch): take it out before the caller hears of the failure.
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

// untilDeleted watches key from after revision rev until it is deleted, or
// for one lease length at most (a hung member's watch says nothing). It
// returns nil for the caller to look again, also when the member loses its
// leader (the watch requires one): an election is no reason to give up.
func (e *entry) untilDeleted(ctx context.Context, key string, rev int64) error {
	wctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx), e.ttl)
	defer cancel() // ends the watch
	for wr := range e.m.client.Watch(wctx, key, clientv3.WithRev(rev+1), clientv3.WithFilterPut()) {
		if err := wr.Err(); err != nil {
			if ctx.Err() != nil {
				return queuedErr(ctx, err, e.key)
			}
			// The lease length passed or the leader was lost: look again
			// (after a pause if the cluster does not answer).
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

// leave takes e out of the queue by revoking its lease, which deletes its
// key. It waits at most tryTimeout and never past ctx's deadline; the
// revoke goes on in the background for up to the lease's TTL, after which
// the lease is gone anyway. Errors are dropped for the same reason.
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
