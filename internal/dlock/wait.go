package dlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"
)

// waiting adds waiting to a mode: embedded in Naive, Lua and Redlock, it
// gives them Lock and Close. A mode only says how to make one attempt
// (attempt) and what a failed attempt means for whoever waits (retry); the
// queue, the wake-ups and the fairness policy are all here and in the
// wait_*.go files beside this one.
type waiting struct {
	tryLock func(ctx context.Context, key string, ttl time.Duration) (*Lock, error)
	attempt attempt
	room    *room
	obs     Observer // nil: nobody listens (see Observe)
}

// attempt makes one try for key. When it fails, its retry says whether
// waiting can still help and when to try again.
type attempt func(ctx context.Context, key string, ttl time.Duration) (*Lock, retry, error)

// retry is what a failed attempt tells a waiting Lock, as a plain value.
type retry struct {
	held  bool          // someone else holds the lock (or a Redlock vote split): a release will come
	slow  bool          // too few Redlock nodes answered in time, though enough are up
	after time.Duration // when to try again if no release is announced first; 0: back off
}

func newWaiting(nodes []*redis.Client, quorum int,
	tryLock func(context.Context, string, time.Duration) (*Lock, error), a attempt) *waiting {
	return &waiting{tryLock: tryLock, attempt: a, room: newRoom(nodes, quorum)}
}

// How long a waiter sleeps at most without an announcement, and how long a
// head waits at most for its own process's release to come back on the
// channel (see fairTurns).
const (
	maxSleep = time.Second
	ownMax   = 50 * time.Millisecond
)

// fairTurns and graceFor are the whole fairness policy between processes,
// which each queue their own waiters and send only their first one (the
// head) to Redis:
//
// A process that has the key may keep it for fairTurns turns in a row.
// When one of its waiters releases the key in the middle of such a run, and
// other processes may be waiting (this one has seen the key contended), the
// release is not announced: the other processes' heads sleep on, rather
// than wake only to lose a race against a process already on a core, and
// this process's next head takes the key at once, as a running goroutine
// may barge in on a sync.Mutex. If no waiter here takes it back within
// graceFor, the release is announced after all (a Redlock attempt may take
// longer than that: what counts is that it has started). The run's last release is
// announced, and this process's next head waits until that announcement
// has come back before trying: by then every other process's head has
// heard it too, and they race on equal terms. Heads woken by an
// announcement also yield to the scheduler a random number of times first,
// so that the fixed order in which Redis and the Go scheduler serve them
// does not pick the same winner every time. Whoever wins starts a new run.
const (
	fairTurns = 8
	graceFor  = time.Millisecond
)

// Lock takes key for ttl, waiting at most wait for a holder to let go and
// never past ctx's deadline, as described on Locker. The goroutines of one
// process that wait for the same key queue up and only the first of them
// asks Redis; it is woken by the release announcements on the key's
// channel, and otherwise sleeps until the holder's key would expire. With
// wait <= 0 it makes one attempt, as TryLock does, and reports a held lock
// as ErrTimeout.
func (w *waiting) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
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

	b := backoff{next: time.Millisecond, max: 32 * time.Millisecond}
	owed := "" // a release held back here, which this head took on to take back
	defer func() {
		if owed != "" { // leaving without the key: announce it after all
			go r.announce(key, owed)
		}
	}()
	var last error // the last try's error, for the timeout's message
	woken := false // this try follows an announcement: a race with other heads
	level := false // this try follows this process's own announcement: a new run
	for {
		// This process's last release ended a run of fairTurns: let it come
		// back before trying, as it reaches the other processes' heads.
		if seen := r.ownRelease(ks); seen != nil {
			if !sleep(wctx, ownMax, seen) {
				r.forgetRelease(key, ks)
			}
			woken, level = true, true
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
		if woken { // see fairTurns
			for range rand.N(4) {
				runtime.Gosched()
			}
		}
		select {
		case <-ks.wake: // an announcement from before this try tells nothing
		default:
		}
		if id := r.retaking(ks); id != "" {
			owed = id
		}
		l, rt, err := w.attempt(ctx, key, ttl)
		switch {
		case err == nil:
			owed = "" // taken back
			r.hold(key, ks, l, last != nil, level)
			return l, nil
		case ctx.Err() != nil:
			return nil, timeoutErr(ctx, key, wait, nil)
		case !rt.held && !rt.slow:
			return nil, err // Redis is unavailable: say so now, not after the wait
		}
		last, level = err, false
		w.retried()
		if rt.held {
			r.heldElsewhere(ks)
		}
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
