package strategy_test

import (
	"errors"
	"testing"

	"github.com/flashsale/flashsale/internal/strategy"
)

func TestParse(t *testing.T) {
	for _, n := range strategy.All() {
		got, err := strategy.Parse(string(n))
		if err != nil || got != n {
			t.Errorf("Parse(%q) = %q, %v; want %q", n, got, err, n)
		}
	}
	for _, bad := range []string{"", "Lua", "sql_atomic", "lua-safe", "zk"} {
		if _, err := strategy.Parse(bad); !errors.Is(err, strategy.ErrUnknown) {
			t.Errorf("Parse(%q) error = %v, want ErrUnknown", bad, err)
		}
	}
}

func TestLockMode(t *testing.T) {
	for _, n := range strategy.All() {
		mode, locked := n.LockMode()
		lockFree := n == strategy.SQLForUpdate || n == strategy.SQLVersion ||
			n == strategy.SQLAtomic || n == strategy.SQLOneTrip || n == strategy.RedisDecr || n == strategy.RedisQueue
		if locked == lockFree {
			t.Errorf("%s.LockMode() locked = %v, want %v", n, locked, !lockFree)
		}
		if locked && string(mode) != string(n) {
			t.Errorf("%s.LockMode() = %q, want the lock mode of the same name", n, mode)
		}
	}
}

func TestEveryLateCommitSurvivorIsSafe(t *testing.T) {
	for _, n := range strategy.All() {
		if n.SurvivesLateCommit() && !n.Safe() {
			t.Errorf("%s survives a late commit but is not safe", n)
		}
	}
}

// TestDatabaseLocks: the database's own locks are safe and hold through a
// late commit (the row lock, or the version, is checked by the database
// when the commit lands), and neither batches nor queues.
func TestDatabaseLocks(t *testing.T) {
	for _, n := range []strategy.Name{strategy.SQLForUpdate, strategy.SQLVersion} {
		if !n.Safe() || !n.SurvivesLateCommit() {
			t.Errorf("%s: Safe %v, SurvivesLateCommit %v; want both", n, n.Safe(), n.SurvivesLateCommit())
		}
		if n.Batches() || n.Queues() || n.Fences() {
			t.Errorf("%s: Batches %v, Queues %v, Fences %v; want none", n, n.Batches(), n.Queues(), n.Fences())
		}
	}
}
