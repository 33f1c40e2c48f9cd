package waitroom

import (
	"context"
	"math/rand/v2"
	"time"
)

// Held is a lock a waiter got, as the room sees it: *dlock.Lock.
type Held interface {
	Key() string
	Token() string
	Validity() time.Duration // how much longer it is sure to be held
}

// Try is a lock's one attempt for the key being waited for, made as by
// says. On failure its Retry says whether waiting can still help and when
// to try again.
type Try func(ctx context.Context, by Asker) (Held, Retry, error)

// Asker is who makes an attempt: a waiting room's head, or nobody in
// particular (the zero value: a one-off try, TryLock's).
type Asker struct {
	Head   bool // a waiting room's head
	InTurn bool // which takes the key in turns (turns.go); a lock without turns ignores it
}

// Retry is what a failed attempt tells a waiting head, as a plain value.
type Retry struct {
	Held  bool          // someone else holds the lock (or a Redlock vote split): a release will come
	Slow  bool          // too few Redlock nodes answered in time, though enough are up
	After time.Duration // when to try again if no release is announced first; 0: back off
}

// TimeoutError is Wait's error when the wait ran out or ctx ended. Last is
// the last try's error, nil if no try failed.
type TimeoutError struct{ Last error }

func (e *TimeoutError) Error() string { return "waitroom: the wait ran out" }

// maxSleep is how long a waiter sleeps at most without an announcement.
const maxSleep = time.Second

// Wait queues for key and, once at the head of this process's queue, calls
// try until it gets the lock, for at most wait and never past ctx's
// deadline. The head is woken by the announcements of the key's releases
// (announced, below) and otherwise sleeps as try's Retry says. It returns
// what try got; try's error as soon as a Retry says waiting cannot help
// (Redis is down); and a *TimeoutError when the wait ran out or ctx ended.
// try gets ctx, not the wait's deadline: an attempt sent is never cut
// short by the wait.
func (r *Room) Wait(ctx context.Context, key string, wait time.Duration, inTurn bool, try Try) (Held, error) {
	r.start()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()

	ks, turn := r.join(key)
	defer r.leave(key, ks, turn)
	select {
	case <-turn:
	case <-wctx.Done():
		return nil, &TimeoutError{}
	}

	head := r.fairHead(key, ks) // this head's part in the fairness rule (fair.go)
	defer head.leave()
	by := Asker{Head: true, InTurn: inTurn}
	b := backoff{next: time.Millisecond, max: 32 * time.Millisecond}
	var last error // the last try's error, for the timeout's message
	woken := false // this try follows an announcement: a race with other heads
	for {
		// If a goroutine of this process holds the key, asking Redis is a
		// wasted round trip: wait for its release (or, if that never comes,
		// for its validity to run out).
		if h := r.localHolder(ks); h != nil && h.Validity() > 0 {
			woken = sleep(wctx, UntilExpiry(h.Validity()), ks.wake)
			if wctx.Err() != nil {
				return nil, &TimeoutError{Last: last}
			}
			continue
		}
		if wctx.Err() != nil {
			return nil, &TimeoutError{Last: last}
		}
		head.ready(wctx, woken)
		select {
		case <-ks.wake: // an announcement from before this try tells nothing
		default:
		}
		l, rt, err := try(ctx, by)
		switch {
		case err == nil:
			r.hold(ks, l, last != nil, head)
			return l, nil
		case ctx.Err() != nil:
			return nil, &TimeoutError{}
		case !rt.Held && !rt.Slow:
			return nil, err // Redis is unavailable: say so now, not after the wait
		}
		last = err
		head.refused(rt.Held)
		r.listen(key, ks) // from now on, hear of its releases
		after := rt.After
		if after == 0 {
			after = b.step()
		}
		woken = sleep(wctx, after, ks.wake)
		if wctx.Err() != nil {
			return nil, &TimeoutError{Last: last}
		}
	}
}

// listen makes sure key's announcements are heard: called when a head
// first fails to get the key. Announcements sent before the subscription
// is confirmed are missed; the confirmation wakes the head to try again.
// It subscribes under r.mu, as the sweeper unsubscribes, so that the two
// reach the subscriber in the order the key's state saw them.
func (r *Room) listen(key string, ks *keyState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ks.listening && r.keys[key] == ks {
		ks.listening = true
		r.sub.Listen(key)
	}
}

// announced handles one node's announcement of a release of key, id being
// the release's token: the Subscriber calls it (New passes it as
// onMessage) for each message on Channel(key), which the release script
// PUBLISHes (scripts/release.lua), and its kick ends the head's sleep on
// ks.wake. A single-node lock is free at once; a Redlock lock only once a
// majority of its nodes have run the release, so the head is woken by the
// quorum-th announcement of a release, the first that can find the lock
// free (earlier ones would send it to find the old token still on a
// majority, and then to sleep until the holder's TTL).
func (r *Room) announced(key, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ks := r.keys[key]
	if ks == nil {
		return // nobody here waits for it
	}
	if r.quorum > 1 && !ks.echoes.add(id, r.quorum) {
		return
	}
	kick(ks.wake)
	r.ownHeard(key, ks) // if it was this process's own release (fair.go)
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

// UntilExpiry returns how long to sleep when a key has pttl left and no
// release is announced: pttl is the holder's time left where it is known
// (a holder in this process), and otherwise the waiter's own TTL, which the
// holder's watchdog may keep renewing past: then this is a poll. Plus
// jitter so that the heads of several processes do not all ask at the same
// instant, and never more than maxSleep.
func UntilExpiry(pttl time.Duration) time.Duration {
	return min(pttl+rand.N(pttl/10+time.Millisecond), maxSleep)
}

// backoff is a jittered exponential backoff, for a lock that does not say
// how long the holder has left (naive).
type backoff struct{ next, max time.Duration }

// step returns a delay between half and all of the current step, and
// doubles the step up to max.
func (b *backoff) step() time.Duration {
	d := b.next/2 + rand.N(b.next/2+1)
	b.next = min(2*b.next, b.max)
	return d
}
