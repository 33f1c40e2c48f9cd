package zklock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The session as the lease, counted by the tracker from what the
// connections carry, without an ensemble: the times are the tests'.

// TestSessionUntil: a session is sure to live until it was last heard from
// plus its timeout, less a tenth kept in hand.
func TestSessionUntil(t *testing.T) {
	heard := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		timeout time.Duration
		want    time.Duration // after heard
	}{
		{2 * time.Second, 1800 * time.Millisecond},
		{400 * time.Millisecond, 360 * time.Millisecond},
		{4 * time.Second, 3600 * time.Millisecond},
	} {
		s := &session{timeout: tc.timeout, heard: heard}
		if got := s.until().Sub(heard); got != tc.want {
			t.Errorf("timeout %v: sure until heard+%v, want heard+%v", tc.timeout, got, tc.want)
		}
	}
}

// TestTrackerConnected: the connect answer starts a session, heard from
// when the connect request was sent; the same session on another
// connection is heard from again, never earlier; a new session, or the
// answer that the old one expired, gives the old one up.
func TestTrackerConnected(t *testing.T) {
	tr := newTracker(time.Second)
	t.Cleanup(tr.close)
	now := time.Now()
	tr.connected(7, 2*time.Second, now)
	first := tr.current()
	if first == nil || first.id != 7 || first.timeout != 2*time.Second || tr.live(7) != first {
		t.Fatalf("after the connect answer: %+v, want session 7, 2s, live", first)
	}
	if got := tr.until(first); !got.Equal(now.Add(1800 * time.Millisecond)) {
		t.Errorf("sure until %v, want the connect request's time + 1.8s", got.Sub(now))
	}

	tr.connected(7, 2*time.Second, now.Add(-time.Second)) // an older connect request, answered late
	if got := tr.until(first); !got.Equal(now.Add(1800 * time.Millisecond)) {
		t.Errorf("an older send moved the bound to %v", got.Sub(now))
	}
	tr.connected(7, 2*time.Second, now.Add(500*time.Millisecond)) // reconnected, same session
	if tr.current() != first || !tr.until(first).Equal(now.Add(2300*time.Millisecond)) {
		t.Errorf("the same session on a new connection: %v, bound +%v; want the same generation, +2.3s",
			tr.current() == first, tr.until(first).Sub(now))
	}

	first.epoch.Store(99)
	tr.connected(8, time.Second, now)
	second := tr.current()
	if second.id != 8 || second.epoch.Load() != 0 {
		t.Errorf("a new session: id %d, epoch %d; want 8, unread (another ensemble, maybe)", second.id, second.epoch.Load())
	}
	if !errors.Is(context.Cause(first.ctx), errExpired) || tr.live(7) != nil {
		t.Errorf("the replaced session: cause %v, want errExpired, and no longer live", context.Cause(first.ctx))
	}

	tr.connected(0, 0, now) // the session asked for has expired
	if !errors.Is(context.Cause(second.ctx), errExpired) || tr.live(8) != nil {
		t.Errorf("after an expired answer: cause %v, want errExpired", context.Cause(second.ctx))
	}
}

// TestTrackerHeard: an answer moves the bound forward only, and only for
// the current session; an answer to a request sent after the session was
// given up brings it back as a new generation of the same session, with
// the same epoch; one sent before does not.
func TestTrackerHeard(t *testing.T) {
	tr := newTracker(time.Second)
	t.Cleanup(tr.close)
	now := time.Now()
	tr.connected(7, 2*time.Second, now)
	s := tr.current()
	s.epoch.Store(42)

	tr.heard(7, now.Add(300*time.Millisecond))
	tr.heard(7, now.Add(100*time.Millisecond)) // an older request answered later
	tr.heard(9, now.Add(time.Second))          // another session's connection
	if got := tr.until(s).Sub(now); got != 2100*time.Millisecond {
		t.Errorf("sure until now+%v, want +2.1s (the latest send of session 7, + 1.8s)", got)
	}

	tr.mu.Lock()
	tr.giveUp(s, errSilent)
	lostAt := s.lostAt
	tr.mu.Unlock()
	tr.heard(7, lostAt.Add(-time.Millisecond)) // sent before it was given up: proves nothing
	if tr.current() != s || tr.live(7) != nil {
		t.Fatal("an answer to a request sent before the give-up brought the session back")
	}
	tr.heard(7, lostAt.Add(time.Millisecond))
	next := tr.live(7)
	if next == nil || next == s || next.epoch.Load() != 42 {
		t.Fatalf("after an answer sent since the give-up: %+v, want a new live generation of 7 with epoch 42", next)
	}
	if s.ctx.Err() == nil {
		t.Error("the generation given up came back to life: its handles must stay cancelled")
	}
}

// TestTrackerGivesUp: the timer gives a session up once its bound has run
// out with nothing newer heard, with errSilent; a bound that has moved
// meanwhile sets the timer again instead.
func TestTrackerGivesUp(t *testing.T) {
	tr := newTracker(time.Second)
	t.Cleanup(tr.close)
	start := time.Now()
	tr.connected(7, 400*time.Millisecond, start)
	s := tr.current()
	select {
	case <-s.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a session never heard from again was not given up")
	}
	if took := time.Since(start); took < 360*time.Millisecond {
		t.Errorf("given up after %v, before its bound (360ms)", took)
	}
	if !errors.Is(context.Cause(s.ctx), errSilent) {
		t.Errorf("cause %v, want errSilent", context.Cause(s.ctx))
	}

	tr.connected(8, 400*time.Millisecond, time.Now())
	s = tr.current()
	tr.mu.Lock()
	s.heard = time.Now().Add(time.Hour) // heard from since the timer was set
	tr.mu.Unlock()
	tr.check(s)
	if s.ctx.Err() != nil {
		t.Errorf("given up with its bound an hour ahead: %v", context.Cause(s.ctx))
	}
	tr.mu.Lock()
	s.heard = time.Now().Add(-time.Second)
	tr.mu.Unlock()
	tr.check(s)
	if !errors.Is(context.Cause(s.ctx), errSilent) {
		t.Errorf("check past the bound: cause %v, want errSilent", context.Cause(s.ctx))
	}
}

// TestTrackerAwaitLive: awaitLive returns the live session at once, waits
// for the next generation while there is none, and ends with ctx's error
// or, after close, ErrClosed.
func TestTrackerAwaitLive(t *testing.T) {
	tr := newTracker(time.Second)
	ctx := context.Background()
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := tr.awaitLive(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("awaitLive before any session: %v, want ctx's error", err)
	}
	got := make(chan *session, 1)
	go func() {
		s, _ := tr.awaitLive(ctx)
		got <- s
	}()
	tr.connected(7, 2*time.Second, time.Now())
	if s := <-got; s == nil || s.id != 7 {
		t.Errorf("awaitLive returned %+v, want session 7", s)
	}
	if s, err := tr.awaitLive(ctx); err != nil || s.id != 7 {
		t.Errorf("awaitLive with a live session: %+v, %v", s, err)
	}
	s := tr.current()
	tr.close()
	if _, err := tr.awaitLive(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("awaitLive after close: %v, want ErrClosed", err)
	}
	if !errors.Is(context.Cause(s.ctx), ErrClosed) {
		t.Errorf("the session after close: cause %v, want ErrClosed", context.Cause(s.ctx))
	}
	tr.connected(8, time.Second, time.Now())
	if tr.current() != s {
		t.Error("a connect answer after close started a session")
	}
}
