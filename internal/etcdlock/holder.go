package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/flashsale/flashsale/internal/dlock"
)

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
var errReleaseGaveUp = errors.New("etcdlock: release gave up")

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
		if _, err := e.renew(ctx); errors.Is(err, dlock.ErrNotHeld) {
			return err
		}
	}
}

// renew sends one keep-alive for e's lease and returns the TTL it got. It
// gives the call a quarter of the lease, so that after a hung member the
// next keep-alive reaches another member before the lease runs out.
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
// since: valid for the lease's TTL from then. Its watchdog keeps the lease
// alive (holder.Refresh) every third of the TTL.
func (e *entry) lock(ctx context.Context, since time.Time) (*dlock.Lock, error) {
	until := since.Add(e.ttl)
	if !time.Now().Before(until) { // the grant took the whole lease
		e.leave(ctx)
		return nil, fmt.Errorf("%w: %q: the acquire took longer than the %v lease", dlock.ErrUnavailable, e.key, e.ttl)
	}
	return dlock.NewHandle(ctx, dlock.Grant{
		Key: e.key, Token: e.token, Fence: e.rev, Epoch: e.epoch,
		TTL: e.ttl, ValidUntil: until, Watchdog: true,
	}, (*holder)(e)), nil
}

// holder is an entry that holds the lock: how its handle renews and lets
// go (dlock.Holder).
type holder entry

// Refresh renews the lease. etcd keeps a lease's TTL from its grant, so
// ttl is not sent: the validity is the lease's TTL from now.
func (h *holder) Refresh(ctx context.Context, _ time.Duration) (time.Duration, error) {
	return (*entry)(h).renew(ctx)
}

// Release revokes the lease, which deletes the key and wakes the waiter
// behind it. Each try gets tryTimeout (a lease found gone after a try that
// timed out was revoked by it), for one lease length at most; then
// ErrUnavailable, and the lease runs out by itself.
func (h *holder) Release(ctx context.Context) error {
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
				dlock.ErrUnavailable, h.key, h.ttl, err)
		}
		return etcdErr(ctx, err, "release", h.key)
	}
}

// Abandon does nothing: with the watchdog stopped, the lease runs out by
// itself after its TTL, and takes the key with it.
func (h *holder) Abandon() {}

// etcdErr translates an error from an etcd request about key: ctx's end,
// or dlock.ErrUnavailable with the cause.
func etcdErr(ctx context.Context, err error, op, key string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("etcdlock: %s %q: %w", op, key, err)
	}
	return fmt.Errorf("%w: %s %q: %w", dlock.ErrUnavailable, op, key, err)
}

// notHeld is the error of a lock found gone.
func notHeld(key, why string) error {
	return fmt.Errorf("%w: %q %s", dlock.ErrNotHeld, key, why)
}

// rest waits retryPause before the next try, and reports whether ctx is
// still live then.
func rest(ctx context.Context) bool {
	t := time.NewTimer(retryPause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return ctx.Err() == nil
}
