package fault

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// watchEveryPass is the pause between two readings of the lock's key on
// the nodes: a new holder is caught within a millisecond or two of its
// grant, early in a critical section of RestartWork.
const watchEveryPass = time.Millisecond

// lockWatch reads the product lock's key on the nodes a strategy locks on:
// all of them for redlock, node 0 alone for fenced (the lua lock's one
// node). It is used by one goroutine.
type lockWatch struct {
	clients []*redis.Client // by node
	quorum  int
	key     string
}

func newLockWatch(addrs []string, st strategy.Name, key string) *lockWatch {
	if st != strategy.Redlock {
		addrs = addrs[:1]
	}
	w := &lockWatch{quorum: len(addrs)/2 + 1, key: key}
	for _, addr := range addrs {
		// A short timeout: a node that is down (refused) or paused (no
		// answer) soon reads as holding nothing.
		w.clients = append(w.clients, fleet.NodeClient(addr, 100*time.Millisecond))
	}
	return w
}

func (w *lockWatch) close() {
	for _, c := range w.clients {
		c.Close()
	}
}

// pass reads the key on every node, one after the other: the token each
// holds, "" where it holds none or did not answer.
func (w *lockWatch) pass(ctx context.Context) []string {
	tokens := make([]string, len(w.clients))
	for i, c := range w.clients {
		if v, err := c.Get(ctx, w.key).Result(); err == nil { // redis.Nil, or no answer: none
			tokens[i] = v
		}
	}
	return tokens
}

// majorities returns the tokens that hold at least a quorum of the nodes
// in tokens: grants, in Redlock's terms.
func (w *lockWatch) majorities(tokens []string) []string {
	count := map[string]int{}
	var out []string
	for _, t := range tokens {
		if t == "" {
			continue
		}
		if count[t]++; count[t] == w.quorum {
			out = append(out, t)
		}
	}
	return out
}

// awaitGrant returns the first token seen taking a majority that the first
// pass did not see (that one's age is unknown): a holder caught within a
// pass of its grant. It reports false if stopped closes or ctx ends first.
func (w *lockWatch) awaitGrant(ctx context.Context, stopped <-chan struct{}) (string, bool) {
	old := map[string]bool{}
	for first := true; ; first = false {
		for _, t := range w.majorities(w.pass(ctx)) {
			if !first && !old[t] {
				return t, true
			}
			old[t] = true
		}
		if !w.wait(ctx, stopped) {
			return "", false
		}
	}
}

// grantedWhileHeld counts the tokens other than holder's that took a
// majority of the nodes in a pass that still found holder's token on a
// node that was not restarted, and watches until holder's token has left
// those nodes (released, or expired) or stopped closes. It returns -1 when
// every watched node was restarted: then nothing tells when holder let go.
func (w *lockWatch) grantedWhileHeld(ctx context.Context, holder string, restarted []int, stopped <-chan struct{}) int {
	var kept []int
	for i := range w.clients {
		if i >= len(restarted) { // restarted are nodes 0..len-1
			kept = append(kept, i)
		}
	}
	if len(kept) == 0 {
		return -1
	}
	others := map[string]bool{}
	for {
		tokens := w.pass(ctx)
		held := false
		for _, i := range kept {
			held = held || tokens[i] == holder
		}
		if !held {
			return len(others)
		}
		for _, t := range w.majorities(tokens) {
			if t != holder {
				others[t] = true
			}
		}
		if !w.wait(ctx, stopped) {
			return len(others)
		}
	}
}

// wait pauses between passes; it reports false if stopped closes or ctx
// ends first.
func (w *lockWatch) wait(ctx context.Context, stopped <-chan struct{}) bool {
	return waitUntil(ctx, stopped, time.Now().Add(watchEveryPass))
}
