package dlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// splitTries bounds how many attempts TryLock makes while the votes keep
// splitting.
const splitTries = 6

// tryLock is Redlock's TryLock. Several clients asking for a free key at
// the same instant can split the vote: with five nodes, ten simultaneous
// attempts may end 2/2/1, so that nobody has a majority and every attempt
// fails. Answering "held" then would be wrong (nobody holds it, and one
// user's ten clicks would all be refused), so a split vote is retried after
// a random delay, as the Redlock algorithm prescribes; each attempt is
// undone in full before the next. The delay grows with each attempt, so
// that the contenders fall out of step and one of them wins, and the
// retries stop after splitTries attempts, after a quarter of the TTL, or
// when ctx ends. A lock held by someone (another token on a majority of the
// nodes) is reported at once, as is a missing majority of nodes.
func (r *Redlock) tryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	start := time.Now()
	for try := 1; ; try++ {
		l, _, err := r.obtain(ctx, key, ttl)
		var rerr *RedlockError
		if err == nil || !errors.As(err, &rerr) || !rerr.split ||
			try == splitTries || time.Since(start) >= ttl/4 {
			return l, err
		}
		sleep(ctx, time.Duration(try)*splitDelay(), nil)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", err, ctx.Err())
		}
	}
}

// heldElsewhere tells, after an attempt that got no majority, a lock held by
// someone from a split vote. SET NX failing on a node only says that some
// token is there; the GET beside it says which. The lock is held only if a
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
