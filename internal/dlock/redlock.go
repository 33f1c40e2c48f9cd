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

// Redlock is the lua lock on N independent Redis masters at once, as the
// Redlock algorithm describes it: a lock counts only if a majority of the
// nodes granted it, inside a validity that subtracts the time spent
// acquiring and an allowance for clock drift. It keeps working with a
// minority of nodes down or slow, and fails cleanly (ErrUnavailable, no keys
// left behind) without a majority. Handles run the same watchdog as lua,
// built on Redlock's extend. Its Lock and Close are the waiting every mode
// shares (wait.go); a waiter is woken once a majority of the nodes have
// announced a release. Redlock is safe for concurrent use.
type Redlock struct {
	*waiting
	nodes  []*redis.Client
	names  []string
	quorum int
}

// NewRedlock returns a Redlock locker on nodes, which must not be empty and
// stay the caller's to close. The nodes must be independent masters, not
// replicas of each other. Build the clients with ContextTimeoutEnabled so
// that a node's timeout also ends its call rather than only the waiting.
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

// TryLock makes one Redlock attempt, except that a split vote is retried
// after a random delay, as the Redlock algorithm prescribes. Several
// clients asking for a free key at the same instant can split the vote:
// with five nodes, ten simultaneous attempts may end 2/2/1, so that nobody
// has a majority and every attempt fails. Answering "held" then would be
// wrong (nobody holds it, and one user's ten clicks would all be refused).
// So each attempt is undone in full, and the next comes after a delay that
// grows with each attempt, so that the contenders fall out of step and one
// of them wins; the retries stop after splitTries attempts, after a quarter
// of the TTL, or when ctx ends.
//
// It returns a *RedlockError wrapping ErrNotObtained if enough nodes
// answered but too few granted the lock (another token holds a majority of
// them, or the votes kept splitting), and wrapping ErrUnavailable if fewer
// nodes than the quorum answered; if ctx ends during a retry's delay, an
// error wrapping both ErrNotObtained and ctx.Err(). Either way every
// attempt has been undone on every node that may hold a part of it.
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

// try is TryLock for a one-off try, and one vote for a waiting room's
// head (wait.go), which waits out a held lock and a split vote (woken by a
// release's announcements), and tries again when nodes were only slow;
// nodes that are down, leaving no majority, end the wait at once.
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

// nodeTimeout bounds how long one node may take to answer. Redlock wants it
// well below the TTL, so that a dead or slow node costs little of the
// validity: a tenth of the TTL, but between 100ms (less would trip over a
// new connection or a scheduling hiccup on a loaded machine, turning a
// healthy node into a missing vote) and 200ms, and never over half the
// TTL. It only bounds the wait: the validity subtracts whatever the acquire
// really took, and an acquire returns as soon as a majority granted it.
func nodeTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl/10, 100*time.Millisecond), 200*time.Millisecond, ttl/2)
}

// drift is Redlock's allowance for the nodes' clocks running at slightly
// different rates (1% of the TTL) plus 2ms for their resolution.
func drift(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// settled reports whether a round has succeeded: a majority has agreed.
// A failing round waits for every node (up to the timeout), so that its
// error can tell nodes that said no from nodes that did not answer.
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

	// The lock is ours only if a majority of the nodes granted it: two
	// clients cannot both hold a majority. And only if that took less than
	// the TTL: what is left of it is the validity, the time we may assume
	// the lock is ours, less the clock drift allowance, because the nodes
	// count the TTL down on their own clocks.
	elapsed := time.Since(start)
	validity := ttl - elapsed - drift(ttl)
	v := r.count(got, validity)
	r.voted(got)
	if v == voteGranted {
		return newLock(ctx, key, token, ttl, start.Add(ttl-drift(ttl)), h, true), v, got, nil
	}

	// Failed: undo on every node that granted, and also on those that
	// seemed to fail or did not answer in time, since a SET may have landed
	// even though its reply was lost. (A node that answered "held" has
	// nothing of ours.) A majority that came too late is announced as it
	// is undone: other waiters may have found the lock held by it. A split
	// vote's few grants are undone quietly: nobody took them for a holder,
	// and announcing every split would wake every waiter to no purpose.
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

// vote is how one Redlock acquire came out, read from the nodes' replies.
// It alone decides what happens next: TryLock retries a split vote, and a
// waiting Lock sleeps, retries or gives up (Redlock.attempt).
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

// heldElsewhere tells, after an attempt that got no majority, a lock held by
// someone from a split vote. SET NX failing on a node only says that some
// token is there; the GET after it says which. The lock is held only if a
// single other token is on a majority of the nodes: only then can its owner
// have been granted the lock. Anything less (several tokens sharing the
// nodes, or a key that expired between the SET and the GET) means nobody has
// a majority now, and trying again may get it.
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

// redlockHold is what a Redlock handle knows beyond the generic Lock: its
// locker and, per node, a channel closed once that node has answered the
// acquire, and whether it granted it. The acquire returns as soon as a
// majority granted it, and a release must not overtake a SET still on its
// way to a slower node, or that SET would land after it and leave a key
// behind.
type redlockHold struct {
	r        *Redlock
	answered []chan struct{}
	granted  []bool         // granted[i] is written before answered[i] is closed
	refused  []bool         // the node answered "held" (its SET never landed); as granted
	released atomic.Bool    // set before releasing: a grant answered later is the release's
	late     []atomic.Int32 // per node, who met a grant after the release (lastOut)
}

// lastOut is called at most once by each of the two that may meet node i's
// grant after the lock was released: the acquire, when the node answers
// after the verdict, and the release, when it gives up waiting for that
// answer. It returns true to the second: the grant is nobody else's to
// undo. (Had the acquire undone it at once, a release still waiting for
// the node would find nothing there and count the node as held.)
func (h *redlockHold) lastOut(i int) bool { return h.late[i].Add(1) == 2 }

// refresh is Redlock's extend: compare-and-PEXPIRE on every node. It counts
// only if a majority extended the lock, and did so while the lock was still
// valid: after its validity another client may have taken a majority, and
// extending our leftovers would hand us a lock we no longer hold.
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

// release deletes the lock on every node where it is still this handle's,
// and each of them announces it unless quiet. It is a success once its
// token is off a majority, and returns as soon as it is: the lock is free,
// and the waiting room may hand it on. The other nodes' releases go on
// without it, and without the caller's ctx, which may end as soon as this
// returns; until then, ctx ends them all. A release waits for slow nodes
// longer than an acquire does, up to the rest of the validity: a release
// cut short leaves the lock blocked until it expires.
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
			// The token is off a node that deleted it, and off one that
			// answered the acquire "held": the lock is free once it is off
			// a majority. A node whose acquire reply was lost counts only
			// if it deleted the token: its SET may land after this.
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
