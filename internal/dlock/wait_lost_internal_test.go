package dlock

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/testenv"
)

// unstartedRoom is a room on n nodes whose subscriber is never started:
// the tests below play its announcements and releases by hand.
func unstartedRoom(t *testing.T, n, quorum int) *room {
	t.Helper()
	clients := make([]redis.UniversalClient, n)
	for i := range clients {
		clients[i] = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
		t.Cleanup(func() { _ = clients[i].Close() })
	}
	return newRoom(clients, quorum)
}

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

	for i := range echoMemory - 1 { // releases heard in full
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
// quorum.
func TestRedlockTallyIsBounded(t *testing.T) {
	var e echoes
	for i := range 10 * echoMemory {
		if got := e.add(fmt.Sprint(i)); got != 1 {
			t.Fatalf("add(%d) = %d, want 1", i, got)
		}
	}
	if len(e.counts) != echoMemory || len(e.order) != echoMemory {
		t.Fatalf("tally holds %d counts, %d tokens; want %d", len(e.counts), len(e.order), echoMemory)
	}
	if got := e.add(fmt.Sprint(10*echoMemory - 1)); got != 2 {
		t.Fatalf("the latest release's second announcement counted %d, want 2", got)
	}
}

// A run-ending release whose announcement never comes back, with no head
// of this process left to wait for it, stops being awaited after ownMax,
// so that the key's state becomes idle and its subscription can be swept.
func TestOwnReleaseLostWithNoWaiter(t *testing.T) {
	r := unstartedRoom(t, 1, 1)
	r.mu.Lock()
	ks := r.state("k")
	ks.listening, ks.confirmed[0], ks.run = true, true, fairTurns
	l := &Lock{key: "k", token: "t", room: r}
	ks.holder = l
	r.mu.Unlock()

	quiet, done := r.releasing(l)
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
