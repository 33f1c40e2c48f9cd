package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The session is the lease, and the client keeps its own count of it.
//
// The ensemble ends a session when it has not heard from it for the
// session timeout. The client heard back from the ensemble about every
// request the ensemble answered, so it knows a time at which the
// ensemble last heard from it: the send time of the latest answered
// request (wire.go). Until that time plus the timeout the session cannot
// have ended, and its nodes, the locks, are still there. The client pings
// every third of the timeout, so while the link is healthy that bound
// stays more than half a timeout ahead.
//
// When it runs out with no newer answer (the link cut or stalled, the
// member hung, this process paused), the session may have ended and
// another client may hold the locks. Then the session is given up: its
// context is cancelled, which cancels every handle's. A tenth of the
// timeout is kept in hand for the timer that notices to fire late on a
// busy machine.
//
// Giving up is this client's guess, not the ensemble's word. If the
// ensemble did not end the session after all (the client reconnects in
// time, or answers resume), the session goes on under a new generation,
// a new *session with the same id, whose context is live: later grants
// use it, while the handles of the generation given up stay cancelled.
// The nodes of those handles were not deleted, so they must still be
// released. And if the ensemble did end it, the client learns so when
// it reconnects (the connect answer names no session) and starts a new
// session; the old one's nodes are gone.
//
// What the bound trusts: a member answers for the ensemble. A follower cut
// off from its leader keeps answering pings for up to syncLimit ticks
// before it gives up, while the leader, which ends sessions, has not
// heard from the client since the cut. The fence is what makes a holder
// that is late by that much harmless.

// marginDivisor: a session is given up a tenth of its timeout before the
// bound runs out.
const marginDivisor = 10

// session is one generation of a ZooKeeper session, as this client tells
// whether it is alive.
type session struct {
	id      int64
	timeout time.Duration   // as the ensemble granted it
	ctx     context.Context // cancelled, with the reason, once given up
	cancel  context.CancelCauseFunc
	epoch   atomic.Int64 // the ensemble's epoch, read once (epoch.go); 0 until then

	// Guarded by the tracker's mu.
	heard  time.Time // the ensemble heard from the session at this time or later
	lostAt time.Time // when it was given up
	timer  *time.Timer
}

// until returns the time until which the session is sure to be alive,
// as far as this client can tell. Called with the tracker's mu held.
func (s *session) until() time.Time {
	return s.heard.Add(s.timeout - s.timeout/marginDivisor)
}

// tracker follows the client's sessions, from what its connections carry.
// Its methods are safe for concurrent use.
type tracker struct {
	handshake time.Duration // how long a member has to answer a connect request (wire.go)

	mu      sync.Mutex
	cur     *session      // the latest generation; nil before the first
	changed chan struct{} // closed, and replaced, when cur is replaced
	closed  bool
}

// Reasons a session is given up, wrapped in the cause of its context.
var (
	errExpired = errors.New("zklock: the ensemble expired the session")
	errSilent  = errors.New("zklock: no answer from the ensemble for most of the session timeout: the session may have expired")
)

func newTracker(handshake time.Duration) *tracker {
	return &tracker{handshake: handshake, changed: make(chan struct{})}
}

// connected is told of a connection's connect answer: the session sid
// granted with timeout, for a connect request sent at sent, or sid 0: the
// session asked for has expired.
func (t *tracker) connected(sid int64, timeout time.Duration, sent time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch cur := t.cur; {
	case t.closed:
	case sid == 0:
		t.giveUp(cur, errExpired)
	case cur != nil && cur.id == sid && cur.ctx.Err() == nil:
		cur.heard = latest(cur.heard, sent) // the same session, on another connection
	default:
		t.giveUp(cur, errExpired) // a new session replaces it
		t.start(sid, timeout, sent)
	}
}

// heard is told that the ensemble heard from session sid at at or later.
func (t *tracker) heard(sid int64, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.cur
	if t.closed || cur == nil || cur.id != sid {
		return
	}
	if cur.ctx.Err() == nil {
		cur.heard = latest(cur.heard, at)
		return
	}
	if at.After(cur.lostAt) { // given up too soon: it lives on
		t.start(sid, cur.timeout, at)
	}
}

// start makes a new generation of session sid current, heard from at
// heard, and starts its timer. Called with t.mu held.
func (t *tracker) start(sid int64, timeout time.Duration, heard time.Time) {
	s := &session{id: sid, timeout: timeout, heard: heard}
	if old := t.cur; old != nil && old.id == sid {
		s.epoch.Store(old.epoch.Load()) // the same session: the same ensemble
	}
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	s.timer = time.AfterFunc(time.Until(s.until()), func() { t.check(s) })
	t.cur = s
	close(t.changed)
	t.changed = make(chan struct{})
}

// check is s's timer: it gives s up if its bound has run out, and
// otherwise sets the timer for when it will.
func (t *tracker) check(s *session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	left := time.Until(s.until())
	if left <= 0 {
		t.giveUp(s, fmt.Errorf("%w (nothing answered since %v ago; timeout %v)",
			errSilent, time.Since(s.heard).Round(time.Millisecond), s.timeout))
		return
	}
	s.timer.Reset(left)
}

// giveUp cancels s's context with why, once. Called with t.mu held.
func (t *tracker) giveUp(s *session, why error) {
	if s == nil || s.ctx.Err() != nil {
		return
	}
	s.lostAt = time.Now()
	s.timer.Stop()
	s.cancel(why)
}

// current returns the latest generation, live or not; nil before the
// first session.
func (t *tracker) current() *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur
}

// live returns the current generation if it is of session sid and not
// given up; nil otherwise.
func (t *tracker) live(sid int64) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.cur; s != nil && s.id == sid && s.ctx.Err() == nil {
		return s
	}
	return nil
}

// until returns the time until which s is sure to be alive.
func (t *tracker) until(s *session) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return s.until()
}

// awaitLive returns the current generation once it is live: at once if it
// is, or when a new one starts. It returns ctx's error if ctx ends first,
// ErrClosed after close.
func (t *tracker) awaitLive(ctx context.Context) (*session, error) {
	for {
		t.mu.Lock()
		s, changed, closed := t.cur, t.changed, t.closed
		t.mu.Unlock()
		switch {
		case closed:
			return nil, ErrClosed
		case s != nil && s.ctx.Err() == nil:
			return s, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// close gives the current session up for good, with ErrClosed.
func (t *tracker) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	t.giveUp(t.cur, ErrClosed)
	close(t.changed)
	t.changed = make(chan struct{})
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
