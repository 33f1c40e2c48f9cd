package waitroom

import (
	"context"
	"math/rand/v2"
	"runtime"
	"time"
)

// The fairness rule between processes. Each process queues its own
// waiters per key and sends only the first, the head, to Redis
// (room.go); between the heads of different processes, one rule: a
// process may take a key fairTurns times in a row, then the others race
// for it on equal terms.
//
//   - In the middle of a run, a release is quiet: it is not announced, the
//     other processes' heads sleep on, and a waiter of this process takes
//     the key back at once, as a running goroutine barges in on a
//     sync.Mutex, instead of waking the others only to beat them. If no
//     waiter here starts to take it back within graceFor, the release is
//     announced after all; one that starts and leaves without the key
//     announces it as it leaves.
//   - The run's last release is announced, and this process's next head
//     waits until that announcement has come back to it (ownMax at most)
//     before it tries: by then every other process's head has heard it
//     too. A head woken by an announcement yields to the scheduler a random
//     number of times before it tries, so that the fixed order in which
//     Redis and the Go scheduler serve the heads does not pick the same
//     winner every time. Whoever wins starts a new run.
//   - Releases are held back only once this process has seen the key
//     contended (a head of it was refused, and it listens to the key), and
//     its own release is awaited only while a quorum of the nodes confirm
//     that subscription: otherwise the announcement could not come back.
//     The release of a lock got by TryLock is always announced.
//
// Everything the rule keeps is here: per key, fairKey; per head, fairHead.
// The rest of the room tells it what happens, through the methods below.
const (
	fairTurns = 8
	graceFor  = time.Millisecond
	ownMax    = 50 * time.Millisecond
)

// fairKey is the rule's state of one key, part of its keyState.
type fairKey struct {
	run      int           // grants to this process in a row, with nobody else holding the key between
	held     *heldBack     // a quiet release, not announced yet
	ownSeen  chan struct{} // closed when this process's run-ending release has come back, or ownMax after it was sent
	ownTimer *time.Timer   // stops awaiting it ownMax after it was sent, whether or not a head here waits
}

// heldBack is a quiet release, announced when its timer fires unless a
// head here takes it on first.
type heldBack struct {
	token string
	timer *time.Timer
}

// busy reports whether the rule still needs the key's state.
func (f *fairKey) busy() bool { return f.held != nil || f.ownSeen != nil }

// fairHead is the rule's part in one head's tries for a key, from its turn
// at the head of the queue until it leaves. Only that head's goroutine
// uses it.
type fairHead struct {
	r     *Room
	key   string
	ks    *keyState
	owed  string // the token of a held-back release this head took on
	level bool   // this try follows this process's run-ending release: a win starts a new run
}

func (r *Room) fairHead(key string, ks *keyState) *fairHead {
	return &fairHead{r: r, key: key, ks: ks}
}

// ready is called before each try: it waits for this process's run-ending
// release to come back, if one is awaited; yields if the head was woken
// (or so waited); and takes on a held-back release, which this head then
// announces if it leaves without the key.
func (h *fairHead) ready(ctx context.Context, woken bool) {
	r, ks := h.r, h.ks
	r.mu.Lock()
	seen := ks.ownSeen
	r.mu.Unlock()
	if seen != nil {
		sleep(ctx, ownMax, seen) // closed ownMax after the release was sent at the latest (ownSent)
		h.level, woken = true, true
	}
	if woken {
		for range rand.N(4) {
			runtime.Gosched()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ks.held != nil {
		ks.held.timer.Stop()
		h.owed, ks.held = ks.held.token, nil
	}
}

// won counts the head's grant: one more in this process's run, or the
// first of a new one after a level race. Called with r.mu held.
func (h *fairHead) won() {
	h.owed = "" // taken back
	if h.level {
		h.ks.run = 1
	} else {
		h.ks.run++
	}
}

// refused records a failed try. If someone else holds the key (held; for
// Redlock, also a split vote), this process's run is over.
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

// Releasing is told by its lock that l, which a waiter here got, is about
// to be released. It says whether the release is quiet (not to be
// announced), and returns what to call once it has been sent: with whether
// it went through, and whether it was announced all the same (or needs no
// announcement). The next head here is woken either way.
func (r *Room) Releasing(l Held) (quiet bool, done func(released, announced bool)) {
	key, token := l.Key(), l.Token()
	r.mu.Lock()
	ks := r.keys[key]
	quiet = ks != nil && ks.listening && ks.run < fairTurns && r.ctx.Err() == nil
	if ks != nil && !quiet && ks.run >= fairTurns && r.heard(ks) {
		r.awaitOwn(key, ks)
	}
	r.mu.Unlock()
	return quiet, func(released, announced bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		ks := r.keys[key]
		switch {
		case quiet && !announced && released && ks != nil:
			r.holdBack(key, ks, token)
		case quiet && !announced:
			// Nobody here waits for the key any more, or the release
			// failed but may have deleted the key all the same: say so
			// rather than leave the other processes asleep.
			go r.announce(key, token)
		case !quiet && !released && ks != nil:
			r.ownHeard(key, ks) // it may not have been announced: do not wait for it
		case !quiet && ks != nil:
			r.ownSent(key, ks)
		}
		r.letGo(l, ks)
	}
}

// holdBack keeps the quiet release token of key from the other processes
// for graceFor. Called with r.mu held.
func (r *Room) holdBack(key string, ks *keyState, token string) {
	if ks.held != nil {
		ks.held.timer.Stop()
	}
	h := &heldBack{token: token}
	h.timer = time.AfterFunc(graceFor, func() { r.graceOver(key, h) })
	ks.held, ks.idle = h, time.Time{}
}

// graceOver announces the release held back as h, unless a head here has
// taken it on since.
func (r *Room) graceOver(key string, h *heldBack) {
	r.mu.Lock()
	ks := r.keys[key]
	mine := ks != nil && ks.held == h
	if mine {
		ks.held = nil
		r.tidy(key, ks)
	}
	r.mu.Unlock()
	if mine {
		r.announce(key, h.token)
	}
}

// stopHoldingBack cancels every release held back and returns them, key to
// token, for the closing room to announce. Called with r.mu held.
func (r *Room) stopHoldingBack() map[string]string {
	held := make(map[string]string)
	for key, ks := range r.keys {
		if ks.held != nil {
			ks.held.timer.Stop()
			held[key], ks.held = ks.held.token, nil
		}
	}
	return held
}

// awaitOwn starts awaiting this process's run-ending release of key,
// before it is sent: a head here then waits for it. Called with r.mu held.
func (r *Room) awaitOwn(key string, ks *keyState) {
	r.ownHeard(key, ks) // an earlier one: no longer
	ks.ownSeen, ks.idle = make(chan struct{}), time.Time{}
}

// ownSent bounds the wait for the run-ending release of key, now sent and
// announced, to ownMax from now: its timer lets go of the wait even when
// no head here is left to notice that the announcement never came back,
// so that the key's state and subscription are not kept for it. (From
// now, not from awaitOwn: a Redlock release may take longer than ownMax
// to reach every node.) Called with r.mu held.
func (r *Room) ownSent(key string, ks *keyState) {
	seen := ks.ownSeen
	if seen == nil || ks.ownTimer != nil {
		return
	}
	ks.ownTimer = time.AfterFunc(ownMax, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if ks.ownSeen == seen {
			r.ownHeard(key, ks)
		}
	})
}

// ownHeard stops awaiting this process's run-ending release of ks's key:
// it came back, announcements may have been lost, it may not have been
// sent, or ownMax has passed. Called with r.mu held.
func (r *Room) ownHeard(key string, ks *keyState) {
	if ks.ownSeen == nil {
		return
	}
	if ks.ownTimer != nil {
		ks.ownTimer.Stop()
	}
	close(ks.ownSeen)
	ks.ownSeen, ks.ownTimer = nil, nil
	r.tidy(key, ks)
}
