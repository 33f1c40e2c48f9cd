package dlock

import (
	"context"
	"math/rand/v2"
	"runtime"
	"time"
)

// fairTurns, graceFor and ownMax are the whole fairness policy between
// processes, which each queue their own waiters and send only their first
// one (the head) to Redis:
//
// A process that has the key may keep it for fairTurns turns in a row.
// When one of its waiters releases the key in the middle of such a run, and
// other processes may be waiting (this one has seen the key contended), the
// release is not announced: the other processes' heads sleep on, rather
// than wake only to lose a race against a process already on a core, and
// this process's next head takes the key at once, as a running goroutine
// may barge in on a sync.Mutex. If no waiter here takes it back within
// graceFor, the release is announced after all (a Redlock attempt may take
// longer than that: what counts is that it has started). The run's last
// release is announced, and this process's next head waits until that
// announcement has come back, for ownMax at most, before trying: by then
// every other process's head has heard it too, and they race on equal
// terms. Heads woken by an announcement also yield to the scheduler a
// random number of times first, so that the fixed order in which Redis and
// the Go scheduler serve them does not pick the same winner every time.
// Whoever wins starts a new run.
//
// Everything the policy keeps is in this file: per key, fairKey; per lock
// a waiter got, fairRoom; per head, fairHead. The rest of the room only
// tells it what happens, through the methods below.
const (
	fairTurns = 8
	graceFor  = time.Millisecond
	ownMax    = 50 * time.Millisecond
)

// fairKey is the policy's state of one key, part of the key's keyState and
// guarded by the room's mu.
type fairKey struct {
	run     int           // grants to this process in a row, with nobody else holding the key between
	grace   *grace        // a release held back, announced unless a waiter here takes the key back first
	ownSeen chan struct{} // closed when this process's release, ending a run, has come back
}

// busy reports whether the policy still needs the key's state: a release
// is held back, or this process's own release is awaited.
func (f *fairKey) busy() bool { return f.grace != nil || f.ownSeen != nil }

// fairRoom is the policy's state of a whole room, guarded by its mu: the
// locks its waiters got and have not released yet, each with whether its
// release is held back (quiet). A lock got by TryLock is not among them:
// its release is always announced.
type fairRoom struct {
	quiet map[*Lock]bool
}

// grace is a release held back, to be announced when its timer fires.
type grace struct {
	id    string // the release's token
	timer *time.Timer
}

// fairHead is the policy's part in one head's tries for a key, from its
// turn at the head of the queue until it leaves, with the key or without.
// Only that head's goroutine uses it.
type fairHead struct {
	r     *room
	key   string
	ks    *keyState
	owed  string // a release held back here, which this head took on to take back
	level bool   // the next try follows this process's own run-ending release: a win starts a new run
}

// fairHead returns the policy's part in the tries of the head of ks's
// queue, for key.
func (r *room) fairHead(key string, ks *keyState) *fairHead {
	return &fairHead{r: r, key: key, ks: ks}
}

// awaitOwnRelease waits, if this process's last release of the key ended a
// run, until that release's announcement has come back (ownMax at most),
// and reports whether it waited: the next try is then a level race, as if
// woken by that announcement.
func (h *fairHead) awaitOwnRelease(ctx context.Context) bool {
	r, ks := h.r, h.ks
	r.mu.Lock()
	seen := ks.ownSeen
	r.mu.Unlock()
	if seen == nil {
		return false
	}
	if !sleep(ctx, ownMax, seen) { // it has not come back: stop waiting for it
		r.mu.Lock()
		r.ownHeard(h.key, ks)
		r.mu.Unlock()
	}
	h.level = true
	return true
}

// trying is called just before each try: a release of this process held
// back is then this head's to announce if it leaves without the key
// (someone else who got it meanwhile announces its own release).
func (h *fairHead) trying() {
	r, ks := h.r, h.ks
	r.mu.Lock()
	defer r.mu.Unlock()
	if ks.grace != nil {
		h.owed = ks.grace.id
		stopGrace(ks)
	}
}

// won records that the head got l: one more turn in this process's run,
// or the first of a new one if it won a level race; its release is the
// policy's to decide (releasing). Called with r.mu held.
func (h *fairHead) won(l *Lock) {
	r, ks := h.r, h.ks
	h.owed = "" // taken back
	if h.level {
		ks.run = 1
	} else {
		ks.run++
	}
	if r.quiet == nil {
		r.quiet = make(map[*Lock]bool)
	}
	r.quiet[l] = false
}

// refused records a try that failed. If someone else holds the key (held;
// for Redlock, also a split vote), this process's run is over. A release
// still held back is announced all the same when its grace is over: after
// a split vote nobody holds the key.
func (h *fairHead) refused(held bool) {
	h.level = false
	if held {
		h.r.mu.Lock()
		h.ks.run = 0
		h.r.mu.Unlock()
	}
}

// leave announces a release this head took on and did not take back.
func (h *fairHead) leave() {
	if h.owed != "" {
		go h.r.announce(h.key, h.owed)
	}
}

// yieldToOtherHeads is what a head woken by an announcement does before
// trying: yield to the scheduler a random number of times.
func yieldToOtherHeads() {
	for range rand.N(4) {
		runtime.Gosched()
	}
}

// releasing is told by Lock.Release that l is about to be released, and
// returns what to call once the release has been sent, with whether it went
// through; nil if l was not got by a waiter of this room. A release in the
// middle of a run is quiet (announceOn says so), and announced only if no
// waiter here takes the key back within graceFor; the run's last release
// is announced, and the next head waits for it to come back. Either way
// the next head here is woken.
func (r *room) releasing(l *Lock) (done func(released bool)) {
	r.mu.Lock()
	if _, ours := r.quiet[l]; !ours {
		r.mu.Unlock()
		return nil
	}
	ks := r.keys[l.key]
	quiet := ks != nil && ks.listening && ks.run < fairTurns && r.ctx.Err() == nil
	if ks != nil && !quiet {
		r.expectRelease(ks)
	}
	r.quiet[l] = quiet
	r.mu.Unlock()
	return func(released bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		quiet := r.quiet[l] // unless the release was announced all the same (handedOn)
		delete(r.quiet, l)
		ks := r.keys[l.key]
		switch {
		case ks == nil:
			if quiet && released { // swept meanwhile: nobody here takes it back
				go r.announce(l.key, l.token)
			}
			return
		case quiet && released:
			stopGrace(ks)
			g := &grace{id: l.token}
			g.timer = time.AfterFunc(graceFor, func() { r.graceOver(l.key, g) })
			ks.grace, ks.idle = g, time.Time{} // in use until the grace is over
		case quiet:
			// It failed, but may have deleted the key all the same: say so
			// rather than leave the other processes asleep.
			go r.announce(l.key, l.token)
		case !released:
			r.ownHeard(l.key, ks) // it may not have been announced: do not wait for it
		}
		if ks.holder == l {
			ks.holder = nil
			kick(ks.wake)
			r.tidy(l.key, ks)
		}
	}
}

// handedOn records that the release of l, though quiet, was announced all
// the same: it handed the key to another process's turn (lua.go). Nobody
// here may take it back, and nothing is left to announce.
func (r *room) handedOn(l *Lock) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.quiet[l]; ok {
		r.quiet[l] = false
	}
}

// announceOn returns the pub/sub channel to announce the release of l on,
// or "" if the room holds that announcement back. A mode calls it as it
// releases l, after Lock.Release has told the room (releasing).
func (r *room) announceOn(l *Lock) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.quiet[l] {
		return ""
	}
	return releaseChannel(l.key)
}

// graceOver announces the release held back as g, unless a waiter here has
// taken the key back since.
func (r *room) graceOver(key string, g *grace) {
	r.mu.Lock()
	ks := r.keys[key]
	mine := ks != nil && ks.grace == g
	if mine {
		ks.grace = nil
		r.tidy(key, ks)
	}
	r.mu.Unlock()
	if mine {
		r.announce(key, g.id)
	}
}

// stopGrace cancels ks's held-back announcement, if any. Called with r.mu
// held.
func stopGrace(ks *keyState) {
	if ks.grace != nil {
		ks.grace.timer.Stop()
		ks.grace = nil
	}
}

// stopGraces cancels every release held back, and returns their keys for
// the closing room to announce. Called with r.mu held.
func (r *room) stopGraces() []string {
	var held []string
	for key, ks := range r.keys {
		if ks.grace != nil {
			stopGrace(ks)
			held = append(held, key)
		}
	}
	return held
}

// expectRelease records that this process is about to release ks's key
// at the end of a run, so that its next head tries again only once the
// announcement has come back. Nothing is recorded for a key whose
// announcements are not heard here: none would come back. Called with
// r.mu held.
func (r *room) expectRelease(ks *keyState) {
	if !ks.confirmed || ks.run < fairTurns {
		return
	}
	if ks.ownSeen != nil {
		close(ks.ownSeen)
	}
	ks.ownSeen = make(chan struct{})
	ks.idle = time.Time{}
}

// ownHeard stops awaiting this process's own release of ks's key, if it
// awaits one: a release was announced, announcements may have been lost,
// or its own release may not have been sent. Called with r.mu held.
func (r *room) ownHeard(key string, ks *keyState) {
	if ks.ownSeen == nil {
		return
	}
	close(ks.ownSeen)
	ks.ownSeen = nil
	r.tidy(key, ks)
}
