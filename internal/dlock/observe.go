package dlock

import (
	"context"
	"errors"
)

// Observer hears what a locker does that its callers cannot see: the
// attempts a waiting Lock makes again, and how each Redlock node voted.
// Package metrics implements it to export these as Prometheus metrics.
// Its methods are called from the goroutines taking locks, concurrently,
// and must return at once.
type Observer interface {
	// Retried is called each time a waiting Lock tries again: its attempt
	// found the key held, split a Redlock vote or got no answer in time
	// (etcd: a request to the cluster failed and is sent again, or a
	// waiter lost its place in the queue and queues anew).
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

// Observe makes l report to o. Call it before l's first use: it is not
// safe concurrently with l's methods. A locker with nothing to report (off)
// ignores it; a locker of another package reports if it has an
// Observe(Observer) method.
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
