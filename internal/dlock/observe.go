package dlock

import (
	"context"
	"errors"
)

// Observer hears what callers cannot see: a waiting Lock's retries and each
// Redlock node's vote (package metrics exports them). Its methods are called
// concurrently from the goroutines taking locks and must return at once.
type Observer interface {
	// Retried is called each time a waiting Lock tries again (etcd: also a
	// request sent again, or a waiter queueing anew).
	Retried()
	// Voted is called after each Redlock acquire, once per node: node is
	// its index among the nodes given to NewRedlock.
	Voted(node int, v Vote)
}

// Vote is one Redlock node's answer to an acquire.
type Vote string

// The votes a node can give.
const (
	VoteGranted  Vote = "granted"   // it set the key for this token
	VoteRefused  Vote = "refused"   // another token holds the key there
	VoteNoAnswer Vote = "no_answer" // it had not answered when the vote was counted
	VoteFailed   Vote = "failed"    // the call failed (connection refused, reset…)
)

// Observe makes l report to o; call it before l's first use. Off ignores
// it; a locker of another package reports if it has Observe(Observer).
func Observe(l Locker, o Observer) {
	switch l := l.(type) {
	case interface{ observe(Observer) }:
		l.observe(o)
	case interface{ Observe(Observer) }:
		l.Observe(o)
	}
}

// observe is Observe for the modes that share waiting.
func (w *waiting) observe(o Observer) { w.obs = o }

// retried tells w's observer, if any, that a Lock tries again.
func (w *waiting) retried() {
	if w.obs != nil {
		w.obs.Retried()
	}
}

// voted tells r's observer, if any, how each node answered an acquire.
func (r *Redlock) voted(got []nodeReply) {
	if r.obs == nil {
		return
	}
	for i, rep := range got {
		v := VoteRefused
		switch {
		case rep.err != nil && errors.Is(rep.err, context.DeadlineExceeded):
			v = VoteNoAnswer
		case rep.err != nil:
			v = VoteFailed
		case rep.ok:
			v = VoteGranted
		}
		r.obs.Voted(i, v)
	}
}
