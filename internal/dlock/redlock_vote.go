package dlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"time"
)

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

// countSlow counts the nodes that did not answer in time, as opposed to
// those that refused or failed outright.
func countSlow(got []nodeReply) int {
	n := 0
	for _, rep := range got {
		var netErr net.Error
		if errors.Is(rep.err, context.DeadlineExceeded) || errors.As(rep.err, &netErr) && netErr.Timeout() {
			n++
		}
	}
	return n
}
