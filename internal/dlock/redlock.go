package dlock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/flashsale/flashsale/internal/dlock/waitroom"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Redlock is the lua lock on N independent Redis masters: a lock counts only
// if a majority granted it, within a validity less the acquire time and a
// clock-drift allowance. It works with a minority of nodes down or slow and
// fails cleanly (ErrUnavailable, no keys left) without a majority. Handles
// run lua's watchdog on Redlock's extend; a waiter wakes once a majority
// announced a release. Lock and Close come from waiting (wait.go). Redlock
// is safe for concurrent use.
type Redlock struct {
	*waiting
	nodes  []*redis.Client
	names  []string
	quorum int
}

// NewRedlock returns a Redlock locker on nodes: independent masters, not
// replicas, not empty, built with ContextTimeoutEnabled, and the caller's
// to close.
func NewRedlock(nodes []*redis.Client) *Redlock {
	r := &Redlock{nodes: slices.Clone(nodes), quorum: len(nodes)/2 + 1}
	for i, c := range nodes {
		r.names = append(r.names, fmt.Sprintf("node %d (%s)", i, c.Options().Addr))
	}
	universal := make([]redis.UniversalClient, len(r.nodes))
	for i, c := range r.nodes {
		universal[i] = c
	}
	r.waiting = newWaiting(universal, r.quorum, r.try)
	return r
}

// TryLock makes one Redlock attempt, but retries a split vote (say 2/2/1
// among simultaneous clients, where nobody holds the lock) after a random,
// growing delay, as the algorithm prescribes, up to splitTries attempts, a
// quarter of the TTL, or ctx's end. It returns a *RedlockError wrapping
// ErrNotObtained if enough nodes answered but too few granted,
// ErrUnavailable if fewer than the quorum answered, and an error wrapping
// ErrNotObtained and ctx.Err() if ctx ends in a delay. A failed attempt is
// undone on every node.
func (r *Redlock) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	start := time.Now()
	for try := 1; ; try++ {
		l, v, _, err := r.obtain(ctx, key, ttl)
		if v != voteSplit || try == splitTries || time.Since(start) >= ttl/4 {
			return l, err
		}
		t := time.NewTimer(time.Duration(try) * splitDelay())
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", err, ctx.Err())
		}
	}
}

// try is TryLock for a one-off try, and one vote for a waiting room's head
// (wait.go): a held lock or split vote waits for a release, slow nodes are
// retried, and no majority of live nodes ends the wait at once.
func (r *Redlock) try(ctx context.Context, key string, ttl time.Duration, by waitroom.Asker) (*Lock, waitroom.Retry, error) {
	if !by.Head {
		l, err := r.TryLock(ctx, key, ttl)
		return l, waitroom.Retry{}, err
	}
	l, v, _, err := r.obtain(ctx, key, ttl)
	switch v {
	case voteHeld:
		// Without an announcement, try again when a lock taken with this
		// TTL would have expired: Redlock does not ask the holder's.
		return nil, waitroom.Retry{Held: true, After: waitroom.UntilExpiry(ttl)}, err
	case voteSplit:
		return nil, waitroom.Retry{Held: true, After: splitDelay()}, err
	case voteSilent:
		t := nodeTimeout(ttl)
		return nil, waitroom.Retry{Slow: true, After: t/2 + rand.N(t)}, err
	}
	return l, waitroom.Retry{}, err
}

// nodeTimeout bounds one node's answer: a tenth of the TTL, so a slow node
// costs little validity, within 100-200ms (less turns a hiccup into a
// missing vote) and never over half the TTL.
func nodeTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl/10, 100*time.Millisecond), 200*time.Millisecond, ttl/2)
}

// drift is Redlock's allowance for the nodes' clocks running at slightly
// different rates (1% of the TTL) plus 2ms for their resolution.
func drift(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// settled reports whether a round has succeeded: a majority agreed. A
// failing round waits for every node, to tell "no" from no answer.
func (r *Redlock) settled(agreed int) bool { return agreed >= r.quorum }

// obtain makes one Redlock attempt and says how the vote came out, with
// every node's reply.
func (r *Redlock) obtain(ctx context.Context, key string, ttl time.Duration) (*Lock, vote, []nodeReply, error) {
	if err := CheckTTL(ttl); err != nil {
		return nil, voteDown, nil, err
	}
	token, timeout := uuid.NewString(), nodeTimeout(ttl)
	h := &redlockHold{r: r, answered: make([]chan struct{}, len(r.nodes)),
		granted: make([]bool, len(r.nodes)), refused: make([]bool, len(r.nodes)),
		late: make([]atomic.Int32, len(r.nodes))}
	for i := range h.answered {
		h.answered[i] = make(chan struct{})
	}
	var failed atomic.Bool // set before the clean-up; read by late replies
	start := time.Now()    // carries a monotonic reading: wall-clock jumps do not count
	got := r.round(ctx, timeout,
		func(ctx context.Context, i int) nodeReply {
			defer close(h.answered[i])
			ok, holder, err := obtainOn(ctx, r.nodes[i], key, token, ttl)
			h.granted[i], h.refused[i] = ok, err == nil && !ok
			return nodeReply{ok: ok, holder: holder, err: err}
		},
		r.settled,
		func(node int, rep nodeReply) { // a node that answered after the verdict
			if !rep.ok && rep.err == nil {
				return // "held": nothing of ours there
			}
			// A failed acquire undoes its grants; a released lock leaves
			// them to its release, unless that gave up on this node.
			if failed.Load() || h.released.Load() && h.lastOut(node) {
				r.undo(ctx, node, key, token, timeout)
			}
		})

	// Ours only with a majority (two clients cannot both have one) and with
	// validity left: the TTL less the acquire time and the clock drift.
	elapsed := time.Since(start)
	validity := ttl - elapsed - drift(ttl)
	v := r.count(got, validity)
	r.voted(got)
	if v == voteGranted {
		return newLock(ctx, key, token, ttl, start.Add(ttl-drift(ttl)), h, true), v, got, nil
	}

	// Failed: undo on every node but those that answered "held", since a SET
	// may have landed with its reply lost. A late majority is announced (it
	// looked held to waiters); a split vote's grants are undone quietly.
	failed.Store(true)
	granted, _, failedNodes := r.tally(got)
	channel := ""
	if granted >= r.quorum {
		channel = waitroom.Channel(key)
	}
	r.round(context.WithoutCancel(ctx), timeout,
		func(ctx context.Context, i int) nodeReply {
			if got[i].err == nil && !got[i].ok {
				return nodeReply{}
			}
			ok, err := releaseOn(ctx, r.nodes[i], key, token, channel)
			return nodeReply{ok: ok, err: err}
		},
		func(int) bool { return false }, nil)
	if ctx.Err() != nil {
		return nil, voteDown, got, fmt.Errorf("dlock: redlock acquire %q: %w", key, ctx.Err())
	}

	rerr := &RedlockError{Op: "acquire", Key: key, Err: ErrNotObtained, Agreed: granted,
		Quorum: r.quorum, Total: len(r.nodes), Nodes: failedNodes}
	if v == voteSilent || v == voteDown {
		rerr.Err = ErrUnavailable
	}
	if granted >= r.quorum { // a majority, but too late to be of use
		return nil, v, got, fmt.Errorf("%w (took %v of a %v TTL)", rerr, elapsed, ttl)
	}
	return nil, v, got, rerr
}

// vote is how one Redlock acquire came out; it alone decides what happens
// next (TryLock retries a split, a waiting Lock sleeps, retries or quits).
type vote int

const (
	voteGranted vote = iota // a majority granted the lock, with validity left
	voteHeld                // another token holds a majority of the nodes
	voteSplit               // enough nodes answered, but nobody holds a majority
	voteSilent              // too few nodes answered, but the silent ones were only slow
	voteDown                // too few nodes answered, and too many failed outright
)

// splitTries bounds how many attempts TryLock makes while the votes keep
// splitting.
const splitTries = 6

// count reads the replies of an acquire that left validity of the lock.
// A majority that came too late (validity <= 0) is a split vote: it is
// undone, and then nobody holds a majority.
func (r *Redlock) count(got []nodeReply, validity time.Duration) vote {
	granted, answered, _ := r.tally(got)
	switch {
	case granted >= r.quorum && validity > 0:
		return voteGranted
	case answered < r.quorum && answered+countSlow(got) >= r.quorum:
		return voteSilent
	case answered < r.quorum:
		return voteDown
	case granted < r.quorum && r.heldElsewhere(got):
		return voteHeld
	default:
		return voteSplit
	}
}

// heldElsewhere reports whether one other token holds a majority of the
// nodes (read by the GET after a refused SET NX): only then is the lock
// held; anything less is a split vote, and trying again may win.
func (r *Redlock) heldElsewhere(got []nodeReply) bool {
	votes := make(map[string]int, len(got))
	for _, rep := range got {
		if rep.err != nil || rep.ok || rep.holder == "" {
			continue
		}
		if votes[rep.holder]++; votes[rep.holder] >= r.quorum {
			return true
		}
	}
	return false
}

// splitDelay is the random delay before trying again after a split vote: a
// few milliseconds, jittered so that the contenders fall out of step.
func splitDelay() time.Duration {
	return time.Millisecond + rand.N(10*time.Millisecond)
}

// redlockHold is a Redlock handle's state: its locker and, per node, a
// channel closed once the node answered the acquire and whether it
// granted. A release must wait for a SET still on its way, or that SET
// would land after it and leave a key behind.
type redlockHold struct {
	r        *Redlock
	answered []chan struct{}
	granted  []bool         // granted[i] is written before answered[i] is closed
	refused  []bool         // the node answered "held" (its SET never landed); as granted
	released atomic.Bool    // set before releasing: a grant answered later is the release's
	late     []atomic.Int32 // per node, who met a grant after the release (lastOut)
}

// lastOut is called at most once each by the acquire (a node answering
// after the verdict) and the release (giving up on that answer); it
// returns true to the second, which undoes the grant.
func (h *redlockHold) lastOut(i int) bool { return h.late[i].Add(1) == 2 }

// refresh is Redlock's extend: compare-and-PEXPIRE on every node, counted
// only if a majority extended it while the lock was still valid (after
// that, another client may hold a majority).
func (h *redlockHold) refresh(ctx context.Context, l *Lock, ttl time.Duration) (time.Duration, error) {
	r := h.r
	start := time.Now()
	left := time.Until(l.until()) // a node answering later than this is of no use
	if left <= 0 {
		return 0, notHeld(l.key, "ran out of validity before the extend")
	}
	got := r.round(ctx, left,
		func(ctx context.Context, i int) nodeReply {
			ok, err := refreshOn(ctx, r.nodes[i], l.key, l.token, ttl)
			return nodeReply{ok: ok, err: err}
		},
		r.settled, nil)
	elapsed := time.Since(start)
	extended, answered, failedNodes := r.tally(got)
	if extended >= r.quorum && time.Now().Before(l.until()) && ttl-elapsed-drift(ttl) > 0 {
		return ttl - drift(ttl), nil // counted from start, like l's validity
	}
	if ctx.Err() != nil && answered-extended <= len(r.nodes)-r.quorum {
		// The caller gave up, not the nodes: unless a majority said the
		// lock is not ours, it may well still be held, as with lua.
		return 0, fmt.Errorf("dlock: redlock extend %q (%d of %d nodes extended it): %w",
			l.key, extended, len(r.nodes), ctx.Err())
	}
	rerr := &RedlockError{Op: "extend", Key: l.key, Err: ErrNotHeld, Agreed: extended,
		Quorum: r.quorum, Total: len(r.nodes), Nodes: failedNodes}
	if answered < r.quorum && ctx.Err() == nil {
		rerr.Err = ErrUnavailable
	}
	return 0, rerr
}

// release deletes the lock on every node still holding this token, each
// announcing it unless quiet, and returns once it is off a majority; after
// that the other nodes' releases go on without ctx. It waits for slow
// nodes up to the rest of the validity: a release cut short blocks the
// lock until it expires.
func (h *redlockHold) release(ctx context.Context, l *Lock, quiet bool) (announced bool, _ error) {
	r := h.r
	h.released.Store(true)
	timeout := max(nodeTimeout(l.currentTTL()), time.Until(l.until()))
	channel := waitroom.Channel(l.key)
	if quiet {
		channel = ""
	}
	nodes, cut := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cut)
	defer stop()
	got := r.round(nodes, timeout,
		func(ctx context.Context, i int) nodeReply {
			select {
			case <-h.answered[i]: // the node's SET is not on its way any more
			case <-ctx.Done():
			}
			if ctx.Err() != nil { // gave up: the acquire undoes a late grant, or we do if it came already
				if h.lastOut(i) {
					r.undo(ctx, i, l.key, l.token, nodeTimeout(l.currentTTL()))
				}
				return nodeReply{err: ctx.Err()}
			}
			// Off a majority counts nodes that deleted the token or had answered
			// "held"; a lost acquire reply counts only if deleted (its SET may land).
			ok, err := releaseOn(ctx, r.nodes[i], l.key, l.token, channel)
			return nodeReply{ok: err == nil && (ok || h.refused[i]), err: err}
		},
		r.settled, nil)
	released, answered, failedNodes := r.tally(got)
	if released >= r.quorum {
		return !quiet, nil
	}
	rerr := &RedlockError{Op: "release", Key: l.key, Err: ErrNotHeld, Agreed: released,
		Quorum: r.quorum, Total: len(r.nodes), Nodes: failedNodes}
	if answered < r.quorum {
		rerr.Err = ErrUnavailable
	}
	return false, rerr
}

// undo releases a late grant on one node, and announces it.
func (r *Redlock) undo(ctx context.Context, node int, key, token string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	_, _ = releaseOn(ctx, r.nodes[node], key, token, waitroom.Channel(key))
}
