package waitroom

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// unstartedRoom is a room on n nodes whose subscriber is never started:
// the tests below play its announcements and releases by hand.
func unstartedRoom(t *testing.T, n, quorum int) *Room {
	t.Helper()
	clients := make([]redis.UniversalClient, n)
	for i := range clients {
		clients[i] = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
		t.Cleanup(func() { _ = clients[i].Close() })
	}
	return New(clients, quorum)
}

// runEnding is a room whose process holds key "k" as l at the end of its
// run, the key contended and listened to: l's release is announced and
// awaited.
func runEnding(t *testing.T) (*Room, *keyState, Held) {
	r := unstartedRoom(t, 1, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	ks := r.state("k")
	ks.listening, ks.confirmed[0], ks.run = true, true, fairTurns
	l := &held{key: "k", token: "t"}
	ks.holder = l
	return r, ks, l
}

// held is a lock got by a waiter, valid for good.
type held struct{ key, token string }

func (h *held) Key() string             { return h.key }
func (h *held) Token() string           { return h.token }
func (h *held) Validity() time.Duration { return time.Hour }

// woken reports whether the key's head was kicked since the last call.
func woken(ks *keyState) bool {
	select {
	case <-ks.wake:
		return true
	default:
		return false
	}
}

// A Redlock head is woken by the quorum-th announcement of a release, even
// when the tally of the key's past releases is full and a later release's
// announcement overtakes the last one it needs.
func TestRedlockQuorumSurvivesFullTally(t *testing.T) {
	const quorum = 3
	r := unstartedRoom(t, 5, quorum)
	r.mu.Lock()
	ks := r.state("k")
	r.mu.Unlock()

	for i := range echoCounting - 1 { // releases heard in full
		for range quorum {
			r.announced("k", fmt.Sprintf("old-%d", i))
		}
	}
	woken(ks)
	r.announced("k", "x")
	r.announced("k", "x")
	r.announced("k", "y") // the next holder's release, from a faster node
	if woken(ks) {
		t.Fatal("woken before a quorum announced any release")
	}
	r.announced("k", "x")
	if !woken(ks) {
		t.Fatal("the quorum-th announcement of x did not wake the head")
	}
}

// The tally stays bounded when some releases' announcements never reach a
// quorum, and when every release is heard.
func TestRedlockTallyIsBounded(t *testing.T) {
	var e echoes
	for i := range 10 * echoDone {
		if e.add(fmt.Sprint("lost-", i), 3) {
			t.Fatalf("one announcement of lost-%d made it heard", i)
		}
		for range 3 {
			e.add(fmt.Sprint("heard-", i), 3)
		}
	}
	if len(e.counts) > echoCounting || len(e.counting) != len(e.counts) || len(e.done) != echoDone || len(e.heard) != echoDone {
		t.Fatalf("tally holds %d counts of %d tokens, %d heard of %d; want at most %d, and %d",
			len(e.counts), len(e.counting), len(e.done), len(e.heard), echoCounting, echoDone)
	}
	if e.add(fmt.Sprint("heard-", 10*echoDone-1), 3) {
		t.Fatal("a fourth announcement of a heard release made it heard again")
	}
}

// A node that lagged announces a burst of releases heard long ago (its
// late share of each): they are dropped, and do not push the release
// being counted out of the tally.
func TestRedlockLateBurstKeepsTheCount(t *testing.T) {
	const quorum = 3
	r := unstartedRoom(t, 5, quorum)
	r.mu.Lock()
	ks := r.state("k")
	r.mu.Unlock()
	for i := range 3 * echoCounting {
		for range quorum {
			r.announced("k", fmt.Sprintf("old-%d", i))
		}
	}
	woken(ks)
	r.announced("k", "x")
	r.announced("k", "x")
	for i := range 3 * echoCounting { // the lagging node catches up
		r.announced("k", fmt.Sprintf("old-%d", i))
	}
	if woken(ks) {
		t.Fatal("a late announcement of a heard release woke the head")
	}
	r.announced("k", "x")
	if !woken(ks) {
		t.Fatal("the quorum-th announcement of x did not wake the head: the late burst pushed its count out")
	}
}

// A run-ending release whose announcement never comes back, with no head
// of this process left to wait for it, stops being awaited after ownMax,
// so that the key's state becomes idle and its subscription can be swept.
func TestOwnReleaseLostWithNoWaiter(t *testing.T) {
	r, ks, l := runEnding(t)

	quiet, done := r.Releasing(l)
	if quiet {
		t.Fatal("the run's last release was quiet")
	}
	done(true, true) // announced, and never heard back: the subscriber is not running
	r.mu.Lock()
	awaited := ks.ownSeen != nil
	r.mu.Unlock()
	if !awaited {
		t.Fatal("the run-ending release is not awaited")
	}
	testenv.WaitFor(t, 20*ownMax, "the lost release no longer awaited and the key idle", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return ks.ownSeen == nil && !ks.idle.IsZero() && r.keys["k"] == ks
	})
}

// A head that arrives while the run-ending release is awaited waits for it
// no longer than ownMax, and then races level.
func TestHeadStopsAwaitingLostOwnRelease(t *testing.T) {
	r := unstartedRoom(t, 1, 1)
	r.mu.Lock()
	ks := r.state("k")
	r.awaitOwn("k", ks)
	r.mu.Unlock()

	h := r.fairHead("k", ks)
	start := time.Now()
	h.ready(t.Context(), false)
	if !h.level {
		t.Fatal("the head after a run-ending release does not race level")
	}
	if waited := time.Since(start); waited < ownMax/2 {
		t.Fatalf("the head waited %v for a release that never came back; want about %v", waited, ownMax)
	}
}

// The wait for a run-ending release is bounded from when the release was
// sent, not from before: a Redlock release can take longer than ownMax to
// reach every node, and an await that lapsed meanwhile would let this
// process's next head try before the others heard the release.
func TestOwnReleaseAwaitedFromItsSending(t *testing.T) {
	r, ks, l := runEnding(t)

	_, done := r.Releasing(l)
	r.mu.Lock()
	awaited, bounded := ks.ownSeen != nil, ks.ownTimer != nil
	r.mu.Unlock()
	if !awaited || bounded {
		t.Fatalf("before the release is sent: awaited %v, bounded %v; want awaited without a deadline yet", awaited, bounded)
	}
	done(true, true)
	r.mu.Lock()
	awaited, bounded = ks.ownSeen != nil, ks.ownTimer != nil
	r.mu.Unlock()
	if !awaited || !bounded {
		t.Fatalf("once sent: awaited %v, bounded %v; want both", awaited, bounded)
	}
}
