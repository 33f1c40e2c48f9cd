package strategy_test

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/zklock"
)

// TestNames: every strategy has one distinct name that a flag, a URL and
// a CSV column can carry as it is, and List and Parse's error name them
// all in All's order, so --help and a typo's message stay complete when a
// strategy is added.
func TestNames(t *testing.T) {
	all := strategy.All()
	if len(all) == 0 {
		t.Fatal("All() is empty")
	}
	word := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	seen := map[strategy.Name]bool{}
	var names []string
	for _, n := range all {
		if !word.MatchString(string(n)) {
			t.Errorf("%q: want lower-case words joined by hyphens", n)
		}
		if seen[n] {
			t.Errorf("%q is listed twice", n)
		}
		seen[n] = true
		names = append(names, string(n))
	}
	if got, want := strategy.List(), strings.Join(names, ", "); got != want {
		t.Errorf("List() = %q, want %q", got, want)
	}
	_, err := strategy.Parse("no-such-strategy")
	if !errors.Is(err, strategy.ErrUnknown) || !strings.Contains(err.Error(), strategy.List()) {
		t.Errorf("Parse(unknown) = %v, want ErrUnknown naming %s", err, strategy.List())
	}
	all[0] = "changed"
	if strategy.All()[0] == "changed" {
		t.Error("All() returns a slice its caller's writes change")
	}
}

// TestLockModeNamesALock: a strategy guarded by a distributed lock is the
// lock mode of its own name, one that dlock, etcdlock or zklock builds; a
// strategy that shares its name with no lock mode takes none.
func TestLockModeNamesALock(t *testing.T) {
	modes := append(dlock.Modes(), etcdlock.Mode, zklock.Mode)
	for _, n := range strategy.All() {
		mode, locked := n.LockMode()
		isMode := slices.Contains(modes, dlock.Mode(n))
		if locked != isMode {
			t.Errorf("%s.LockMode() locked = %v, but a lock mode of that name exists: %v", n, locked, isMode)
		}
		if locked && mode != dlock.Mode(n) {
			t.Errorf("%s.LockMode() = %q, want %q", n, mode, n)
		}
		if !locked && mode != "" {
			t.Errorf("%s.LockMode() = %q, false; want no mode", n, mode)
		}
	}
}
