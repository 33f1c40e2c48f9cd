package dlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
)

// waiting adds waiting to a mode: embedded in Naive, Lua and Redlock (and
// used by Reentrant), it gives them Lock and Close. A mode only says how to
// make one attempt (attempt) and what a failed attempt means for whoever
// waits (retry). The loop is here; the queue per key is in wait_queue.go,
// the wake-ups in wait_announce.go and wait_subscriber.go, and the fairness
// policy between processes in wait_fair.go.
type waiting struct {
	tryLock func(ctx context.Context, key string, ttl time.Duration) (*Lock, error)
	attempt attempt
	room    *room
	obs     Observer // nil: nobody listens (see Observe)
}

// attempt makes one try for key. When it fails, its retry says whether
// waiting can still help and when to try again.
// inTurn says the waiter takes the key in turns with other processes'
// (InTurns); a mode without turns ignores it.
type attempt func(ctx context.Context, key string, ttl time.Duration, inTurn bool) (*Lock, retry, error)

// retry is what a failed attempt tells a waiting Lock, as a plain value.
type retry struct {
	held  bool          // someone else holds the lock (or a Redlock vote split): a release will come
	slow  bool          // too few Redlock nodes answered in time, though enough are up
	after time.Duration // when to try again if no release is announced first; 0: back off
}

// waitingHolder is a holder whose locks a waiting room may have handed out:
// Lock.Release tells that room of the release (see room.releasing).
type waitingHolder interface{ waitingRoom() *room }

func (w *waiting) waitingRoom() *room { return w.room }

func newWaiting(nodes []redis.UniversalClient, quorum int,
	tryLock func(context.Context, string, time.Duration) (*Lock, error), a attempt) *waiting {
	return &waiting{tryLock: tryLock, attempt: a, room: newRoom(nodes, quorum)}
}

// maxSleep is how long a waiter sleeps at most without an announcement.
const maxSleep = time.Second

// Lock takes key for ttl, waiting at most wait for a holder to let go and
// never past ctx's deadline, as described on Locker. The goroutines of one
// process that wait for the same key queue up and only the first of them
// asks Redis; it is woken by the release announcements on the key's
// channel, and otherwise sleeps until the holder's key would expire. With
// wait <= 0 it makes one attempt, as TryLock does, and reports a held lock
// as ErrTimeout.
func (w *waiting) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	return w.lock(ctx, key, ttl, wait, false)
}

// lock is Lock, for a waiter that takes the key in turns (InTurns) or not.
func (w *waiting) lock(ctx context.Context, key string, ttl, wait time.Duration, inTurn bool) (*Lock, error) {
	if wait <= 0 {
		l, err := w.tryLock(ctx, key, ttl)
		if errors.Is(err, ErrNotObtained) {
			return nil, timeoutErr(ctx, key, wait, err)
		}
		return l, err
	}
	r := w.room
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

	fair := r.fairHead(key, ks) // the fairness policy's part in this head's tries (wait_fair.go)
	defer fair.leave()
	b := backoff{next: time.Millisecond, max: 32 * time.Millisecond}
	var last error // the last try's error, for the timeout's message
	woken := false // this try follows an announcement: a race with other heads
	for {
		if fair.awaitOwnRelease(wctx) {
			woken = true
		}
		// If a goroutine of this process holds the key, asking Redis is a
		// wasted round trip: wait for its release (or, if that never comes,
		// for its validity to run out).
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
		if woken {
			yieldToOtherHeads()
		}
		select {
		case <-ks.wake: // an announcement from before this try tells nothing
		default:
		}
		fair.trying()
		l, rt, err := w.attempt(ctx, key, ttl, inTurn)
		switch {
		case err == nil:
			r.hold(ks, l, last != nil, fair)
			return l, nil
		case ctx.Err() != nil:
			return nil, timeoutErr(ctx, key, wait, nil)
		case !rt.held && !rt.slow:
			return nil, err // Redis is unavailable: say so now, not after the wait
		}
		last = err
		fair.refused(rt.held)
		w.retried()
		r.listen(key, ks) // from now on, hear of its releases
		after := rt.after
		if after == 0 {
			after = b.step()
		}
		woken = sleep(wctx, after, ks.wake)
		if wctx.Err() != nil {
			return nil, timeoutErr(ctx, key, wait, last)
		}
	}
}

// Close stops listening for releases and waits for that to end. Handles
// already returned keep working, and so does Lock, though its waiters then
// only wake when the holder's TTL would run out. It does not close the
// Redis clients, which stay the caller's, and always returns nil. Calling
// it again does nothing.
func (w *waiting) Close() error {
	w.room.close()
	return nil
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

// backoff is a jittered exponential backoff, for a mode that does not say
// how long the holder has left (naive).
type backoff struct{ next, max time.Duration }

// step returns a delay between half and all of the current step, and
// doubles the step up to max.
func (b *backoff) step() time.Duration {
	d := b.next/2 + rand.N(b.next/2+1)
	b.next = min(2*b.next, b.max)
	return d
}
