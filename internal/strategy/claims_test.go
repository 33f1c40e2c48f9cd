package strategy_test

import (
	"slices"
	"testing"

	"github.com/flashsale/flashsale/internal/strategy"
)

// TestClaimsAgree: the claims a strategy makes, which the load generator
// turns into verdicts and the order flow into code paths, do not
// contradict each other, for every strategy there is.
func TestClaimsAgree(t *testing.T) {
	for _, n := range strategy.All() {
		_, locked := n.LockMode()
		claim := func(ok bool, what string) {
			t.Helper()
			if !ok {
				t.Errorf("%s: %s", n, what)
			}
		}
		if n.Fences() {
			claim(locked, "fences without a lock to mint the token")
			claim(n.Safe(), "fences but does not claim to be safe")
			claim(n.SurvivesLateCommit(), "fences, so the database refuses a late commit, but does not survive one")
		}
		if n.Batches() {
			claim(locked, "batches with no lease to share")
			claim(n.Safe(), "batches on a lease that is not meant to hold")
		}
		if n.Queues() {
			claim(!locked, "queues orders but takes a lock for the stock")
			claim(n.Safe(), "queues but does not claim to be safe")
		}
		if !locked {
			claim(n.SurvivesLateCommit(), "has no lease to outlive, but does not survive a late commit")
		}
		if locked && !n.Fences() {
			claim(!n.SurvivesLateCommit(), "a lease alone survives a late commit")
		}
		if n.SurvivesLateCommit() {
			claim(n.Safe(), "survives a late commit but is not safe")
		}
	}
}

// TestTheRowsThatFail: off and naive are there to fail and claim nothing;
// lua and redlock are safe until a commit lands after their lease, the
// row the late-commit fault shows. Every other strategy survives it.
func TestTheRowsThatFail(t *testing.T) {
	var unsafe, late []strategy.Name
	for _, n := range strategy.All() {
		if !n.Safe() {
			unsafe = append(unsafe, n)
		}
		if !n.SurvivesLateCommit() {
			late = append(late, n)
		}
	}
	if want := []strategy.Name{strategy.Off, strategy.Naive}; !slices.Equal(unsafe, want) {
		t.Errorf("not Safe: %v, want %v", unsafe, want)
	}
	if want := []strategy.Name{strategy.Off, strategy.Naive, strategy.Lua, strategy.Redlock}; !slices.Equal(late, want) {
		t.Errorf("not SurvivesLateCommit: %v, want %v", late, want)
	}
	for _, n := range []strategy.Name{strategy.Off, strategy.Naive} {
		if n.Batches() || n.Fences() || n.Queues() {
			t.Errorf("%s: Batches %v, Fences %v, Queues %v; want none: it sells one buyer at a time, to fail",
				n, n.Batches(), n.Fences(), n.Queues())
		}
	}
}
