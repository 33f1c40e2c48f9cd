package dlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
)

// Waiting for a held lock, in one place for every Redis mode: Naive, Lua
// and Redlock embed a waiting, which gives them Lock and Close. The seam between a mode and its
// waiting is two functions of the mode:
//
//   - try makes one attempt for a key and, when it fails, says in a retry
//     whether waiting can still help and when to try again;
//   - the mode's release (lock.go's holder) announces the release on the
//     key's channel unless the waiting room asks it to be quiet.
//
// Everything else is the room's (wait_room.go): the goroutines of one
// process queue per key, and only the first of them, the head, asks
// Redis; the head is woken by the release announcements (wait_listen.go,
// package announce) and otherwise sleeps until a key taken with its own
// TTL would have expired (a poll about once per TTL: the holder's time
// left is not asked); and between processes one fairness rule decides which releases
// are announced at once and when a head may try (wait_fair.go).
type waiting struct {
	try  tryFunc
	room *room
	obs  Observer // nil: nobody listens (see Observe)
}

// tryFunc is a mode's one attempt for key, made as by says. The zero
// asker is a one-off try (TryLock, or Lock with no wait: for Redlock,
// that retries a split vote as TryLock says); a waiting room's head gets
// one attempt, and the retry that says how to go on.
type tryFunc func(ctx context.Context, key string, ttl time.Duration, by asker) (*Lock, retry, error)

// asker is who makes an attempt: a waiting room's head, or nobody in
// particular (the zero value: a one-off try).
type asker struct {
	head   bool // a waiting room's head
	inTurn bool // which takes the key in turns (InTurns, turns.go); a mode without turns ignores it
}

// retry is what a failed attempt tells a waiting Lock, as a plain value.
type retry struct {
	held  bool          // someone else holds the lock (or a Redlock vote split): a release will come
	slow  bool          // too few Redlock nodes answered in time, though enough are up
	after time.Duration // when to try again if no release is announced first; 0: back off
}

func newWaiting(nodes []redis.UniversalClient, quorum int, try tryFunc) *waiting {
	return &waiting{try: try, room: newRoom(nodes, quorum)}
}

// maxSleep is how long a waiter sleeps at most without an announcement.
const maxSleep = time.Second

// Lock takes key for ttl, waiting at most wait for a holder to let go and
// never past ctx's deadline, as described on Locker. The goroutines of one
// process that wait for the same key queue up and only the first of them
// asks Redis; it is woken by the release announcements on the key's
// channel, and otherwise polls about once per ttl (the mode's try says
// how long). With
// wait <= 0 it makes one attempt, as TryLock does, and reports a held lock
// as ErrTimeout.
func (w *waiting) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	return w.lock(ctx, key, ttl, wait, false)
}

// lock is Lock, for a waiter that takes the key in turns (InTurns) or not.
func (w *waiting) lock(ctx context.Context, key string, ttl, wait time.Duration, inTurn bool) (*Lock, error) {
	if wait <= 0 {
		l, _, err := w.try(ctx, key, ttl, asker{})
		if errors.Is(err, ErrNotObtained) {
			return nil, TimedOut(ctx, key, wait, err)
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
		return nil, TimedOut(ctx, key, wait, nil)
	}

	head := r.fairHead(key, ks) // this head's part in the fairness rule (wait_fair.go)
	defer head.leave()
	by := asker{head: true, inTurn: inTurn}
	b := backoff{next: time.Millisecond, max: 32 * time.Millisecond}
	var last error // the last try's error, for the timeout's message
	woken := false // this try follows an announcement: a race with other heads
	for {
		// If a goroutine of this process holds the key, asking Redis is a
		// wasted round trip: wait for its release (or, if that never comes,
		// for its validity to run out).
		if h := r.localHolder(ks); h != nil && h.Validity() > 0 {
			woken = sleep(wctx, untilExpiry(h.Validity()), ks.wake)
			if wctx.Err() != nil {
				return nil, TimedOut(ctx, key, wait, last)
			}
			continue
		}
		if wctx.Err() != nil {
			return nil, TimedOut(ctx, key, wait, last)
		}
		head.ready(wctx, woken)
		select {
		case <-ks.wake: // an announcement from before this try tells nothing
		default:
		}
		l, rt, err := w.try(ctx, key, ttl, by)
		switch {
		case err == nil:
			r.hold(ks, l, last != nil, head)
			return l, nil
		case ctx.Err() != nil:
			return nil, TimedOut(ctx, key, wait, nil)
		case !rt.held && !rt.slow:
			return nil, err // Redis is unavailable: say so now, not after the wait
		}
		last = err
		head.refused(rt.held)
		w.retried()
		r.listen(key, ks) // from now on, hear of its releases
		after := rt.after
		if after == 0 {
			after = b.step()
		}
		woken = sleep(wctx, after, ks.wake)
		if wctx.Err() != nil {
			return nil, TimedOut(ctx, key, wait, last)
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

// untilExpiry returns how long to sleep when a key has pttl left and no
// release is announced: pttl is the holder's time left where it is known
// (a holder in this process), and otherwise the waiter's own TTL, which the
// holder's watchdog may keep renewing past: then this is a poll. Plus
// jitter so that the heads of several processes do not all ask at the same
// instant, and never more than maxSleep.
func untilExpiry(pttl time.Duration) time.Duration {
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
