package dlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"time"
)

// attempt makes one try for a lock. If trying again later may succeed
// (someone else holds the lock, or for redlock some nodes were merely slow),
// it returns an error for which retryable is true and how long to wait
// before the next try if no release is announced first.
type attempt func(ctx context.Context) (*Lock, time.Duration, error)

// retryable reports whether waiting may still get the lock after err:
// someone else holds it, or a Redlock majority was missed only because
// nodes were slow to answer, not because they are down.
func retryable(err error) bool {
	var rerr *RedlockError
	return errors.Is(err, ErrNotObtained) || errors.As(err, &rerr) && rerr.slow
}

// How long a waiter sleeps at most without an announcement, and how long it
// waits at most for its own process's release to come back on the channel.
const (
	maxSleep = time.Second
	ownMax   = 50 * time.Millisecond
)

// lock is the waiting acquire every mode but off shares.
//
// Spinning on a contended key does not just waste round trips: every
// waiter's SET competes with the holder's release, and throughput collapses
// as waiters are added. So waiting is three things:
//
//  1. a local queue per key: only the head of this process's queue asks
//     Redis; the others wait for their turn, honouring ctx and the wait;
//  2. a wake-up: every release is announced on the key's pub/sub channel,
//     which the head listens to once it has failed to get the key, and it
//     tries again the moment it hears of one;
//  3. a fallback for when no announcement comes (the holder crashed and its
//     key expired, or the subscription is down): sleep until the holder's
//     key would expire, with jitter, never blindly in a loop.
//
// It stays fair between processes: a release by this process wakes this
// process's head through the same announcement that wakes the others, and
// the woken heads are shuffled, so every process's head gets the same
// chance at the lock.
func (r *room) lock(ctx context.Context, key string, wait time.Duration, try attempt) (*Lock, error) {
	if wait <= 0 {
		l, _, err := try(ctx)
		if retryable(err) {
			return nil, timeoutErr(ctx, key, wait, err)
		}
		return l, err
	}
	r.start()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()

	ks, turn := r.join(key)
	defer r.leave(key, ks, turn)
	select {
	case <-turn:
	case <-wctx.Done():
		return nil, timeoutErr(ctx, key, wait, nil)
	}

	var last error // the last try's error, for the timeout's message
	woken := false // this try follows an announcement: a race with other heads
	for {
		// If this process just released the key, let the announcement come
		// back before trying: the other processes' heads try only once it
		// reaches them, and this one must not get a head start.
		if id, seen := r.ownRelease(ks); seen != nil {
			if !sleep(wctx, ownMax, seen) {
				r.forgetRelease(key, id)
			}
			woken = true
		}
		// If a goroutine of this process holds the key, asking Redis is a
		// wasted round trip: wait for its release to be announced (or, if
		// that never comes, for its validity to run out).
		if h := r.localHolder(ks); h != nil && h.Validity() > 0 {
			woken = sleep(wctx, untilExpiry(h.Validity()), ks.wake)
			if wctx.Err() != nil {
				return nil, timeoutErr(ctx, key, wait, last)
			}
			continue
		}
		if wctx.Err() != nil {
			return nil, timeoutErr(ctx, key, wait, last)
		}

		// Heads woken by the same announcement race for the key. Their
		// connections are served in the same order every time, so without
		// a shuffle the same locker would tend to win; several lockers in
		// one Go process (the demo's three in-process shops, the tests)
		// also come off the scheduler in that order. Yielding a random
		// number of times makes the race a fair draw, at the cost of
		// nothing when no other goroutine is waiting to run.
		if woken {
			for range rand.N(4) {
				runtime.Gosched()
			}
		}
		select {
		case <-ks.wake: // an announcement from before this try tells nothing
		default:
		}
		l, retry, err := try(ctx)
		switch {
		case err == nil:
			r.hold(key, ks, l, last != nil)
			return l, nil
		case ctx.Err() != nil:
			return nil, timeoutErr(ctx, key, wait, nil)
		case !retryable(err):
			return nil, err // Redis is unavailable: say so now, not after the wait
		}
		last = err

		r.listen(key, ks) // from now on, hear of its releases
		woken = sleep(wctx, retry, ks.wake)
		if wctx.Err() != nil {
			return nil, timeoutErr(ctx, key, wait, last)
		}
	}
}

// sleep waits for d, for wake, or for ctx to end, and reports whether wake
// came first.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// untilExpiry returns how long to sleep when the holder's key has pttl
// left and no release is announced: until it would expire, plus jitter so
// that the heads of several processes do not all ask at the same instant,
// and never more than maxSleep. A negative pttl means the key never expires
// (a naive holder that crashed): sleep long.
func untilExpiry(pttl time.Duration) time.Duration {
	if pttl < 0 {
		pttl = maxSleep
	}
	return min(pttl+rand.N(pttl/10+time.Millisecond), maxSleep)
}

// backoff is a jittered exponential backoff, for naive, which does not ask
// the holder's TTL.
type backoff struct{ next, max time.Duration }

// step returns a delay between half and all of the current step, and
// doubles the step up to max.
func (b *backoff) step() time.Duration {
	d := b.next/2 + rand.N(b.next/2+1)
	b.next = min(2*b.next, b.max)
	return d
}
