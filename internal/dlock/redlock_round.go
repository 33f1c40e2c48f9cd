package dlock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// nodeReply is one node's answer in a Redlock round.
type nodeReply struct {
	ok     bool   // granted, extended or released
	holder string // acquire, not granted: the holder's token, "" if unknown
	err    error  // no usable answer
}

// nodeCall is what a round asks of node number node.
type nodeCall func(ctx context.Context, node int) nodeReply

// round asks every node at once and gathers replies until settled says the
// outcome is decided or timeout passes; silent nodes get a timeout error.
// A call that answers after the round is over is handed to late (if not
// nil), so the caller can undo a grant nobody counted.
func (r *Redlock) round(ctx context.Context, timeout time.Duration, call nodeCall,
	settled func(agreed int) bool, late func(node int, rep nodeReply)) []nodeReply {
	type indexed struct {
		node int
		nodeReply
	}
	replies := make(chan indexed, len(r.nodes)) // buffered: a sender never blocks
	over := make(chan struct{})
	// One deadline for every node's call, freed by the last call to end.
	nctx, cancel := context.WithTimeout(ctx, timeout)
	free := sync.OnceFunc(cancel)
	var calling atomic.Int32
	calling.Store(int32(len(r.nodes)))
	for i := range r.nodes {
		go func() {
			rep := call(nctx, i)
			if calling.Add(-1) == 0 {
				free()
			}
			select {
			case <-over:
				if late != nil {
					late(i, rep)
				}
			default:
				replies <- indexed{i, rep}
			}
		}()
	}

	got := make([]nodeReply, len(r.nodes))
	answered := make([]bool, len(r.nodes))
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for ok, pending := 0, len(r.nodes); pending > 0 && !settled(ok); {
		select {
		case rep := <-replies:
			got[rep.node], answered[rep.node] = rep.nodeReply, true
			pending--
			if rep.err == nil && rep.ok {
				ok++
			}
		case <-timer.C:
			pending = 0
		}
	}
	close(over)
	// Only the silent nodes get an error, formatted only now.
	for i := range got {
		if !answered[i] {
			got[i].err = fmt.Errorf("no answer within %v: %w", timeout, context.DeadlineExceeded)
		}
	}
	return got
}

// tally counts the nodes that agreed and the nodes that answered at all, and
// names the ones that failed.
func (r *Redlock) tally(got []nodeReply) (agreed, answered int, failed []*NodeError) {
	for i, rep := range got {
		switch {
		case rep.err != nil:
			failed = append(failed, &NodeError{Node: r.names[i], Err: rep.err})
		case rep.ok:
			agreed++
			answered++
		default:
			answered++
		}
	}
	return agreed, answered, failed
}

// obtainOn makes one acquire on c: SET key token NX PX ttl and, if refused,
// a GET for the holder's token ("" if the key vanished), which tells a held
// lock from a split vote.
func obtainOn(ctx context.Context, c *redis.Client, key, token string, ttl time.Duration) (granted bool, holder string, err error) {
	err = c.Do(ctx, "SET", key, token, "NX", "PX", ttl.Milliseconds()).Err()
	switch {
	case err == nil:
		return true, "", nil
	case !errors.Is(err, redis.Nil): // redis.Nil is SET NX's "key exists"
		return false, "", err
	}
	holder, err = c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return false, "", nil
	}
	return false, holder, err
}

// releaseOn runs release.lua on c, without turns (a node keeps none):
// whether token still held key. An empty channel releases without an
// announcement.
func releaseOn(ctx context.Context, c *redis.Client, key, token, channel string) (bool, error) {
	n, err := releaseScript.Run(ctx, c, []string{key}, token, channel).Int64()
	return n == 1, err
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
