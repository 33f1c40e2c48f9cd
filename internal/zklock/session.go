package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The session is the lease, counted by the client: the ensemble heard from
// it no earlier than the latest answered request's send time (wire.go), so
// it lasts at least the timeout from then. When that bound runs out (less
// a tenth, for a late timer) the session is given up and its handles'
// contexts cancelled. If the ensemble kept it, it goes on as a new
// generation (same id), but the old handles stay cancelled and their nodes
// must still be released. A cut-off follower answering pings is a gap only
// the fence closes (docs/zookeeper.md).

// marginDivisor: a session is given up a tenth of its timeout early.
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
