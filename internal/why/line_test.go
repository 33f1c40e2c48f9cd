package why

import (
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/fault"
	"github.com/flashsale/flashsale/internal/ledger"
	"github.com/flashsale/flashsale/internal/strategy"
)

// lateRow is a row of mode that sold all 100 units with n late commits and
// the given lost updates.
func lateRow(s Settings, st strategy.Name, late int64, overlaps int) Row {
	sold := 100 + overlaps
	return Row{Strategy: st, Settings: s, Audit: ledger.Audit{InitialStock: 100, Sold: sold, Stock: 0, Oversold: overlaps, Consistent: overlaps == 0},
		Events: ledger.Events{LateCommits: late}, Planned: 10, Sent: 10}
}

func TestWhyLateCommitSaysOnlyWhatWasCompared(t *testing.T) {
	s := Settings{Work: 2 * time.Millisecond, Stall: 300 * time.Millisecond, StallRate: 0.08, Batch: 64}
	s.LockTTL, s.StallRate = 100*time.Millisecond, 0
	for _, tc := range []struct {
		name     string
		late     time.Duration
		overlaps int
		want     []string
		not      []string
	}{
		{"within the TTL, nothing lost", 50 * time.Millisecond, 0,
			[]string{"held back 50ms with their renewals, within the 100ms TTL", "no sale overwrote another's"},
			[]string{"past the", "leases ran out", "not a mutex"}},
		{"longer than the TTL, updates lost", 300 * time.Millisecond, 4,
			[]string{"longer than the 100ms TTL, so their leases ran out", "4 sales overwrote", "oversold 4"},
			[]string{"within"}},
		{"longer than the TTL, nothing lost", 300 * time.Millisecond, 0,
			[]string{"leases ran out", "no sale overwrote another's"},
			[]string{"not a mutex", "read the stock before"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.LateCommit = tc.late
			why := Line(lateRow(s, strategy.Lua, 3, tc.overlaps))
			for _, w := range tc.want {
				if !strings.Contains(why, w) {
					t.Errorf("why = %q, want it to say %q", why, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(why, n) {
					t.Errorf("why = %q, which says %q unmeasured", why, n)
				}
			}
		})
	}
}

func TestWhyFencedLateCommitClaimsNoWait(t *testing.T) {
	s := Settings{Work: 2 * time.Millisecond, Stall: 300 * time.Millisecond, StallRate: 0.08, Batch: 64}
	s.LockTTL, s.LateCommit = 100*time.Millisecond, 300*time.Millisecond
	why := Line(lateRow(s, strategy.Fenced, 3, 0))
	if strings.Contains(why, "waited") {
		t.Errorf("why = %q: no wait was measured", why)
	}
	if !strings.Contains(why, "3 commits were held back 300ms (longer than the 100ms TTL)") {
		t.Errorf("why = %q, want the count and the comparison with the TTL", why)
	}
}

// The faults' clauses come first, one per fault that acted, then the
// strategy's own clause with the audit's figures.
func TestWhyComposesTheFaultsClauses(t *testing.T) {
	s := Settings{LockTTL: time.Second, Work: 150 * time.Millisecond}
	m := Row{Strategy: strategy.Redlock, Settings: s, Planned: 10, Sent: 10,
		Audit: ledger.Audit{InitialStock: 10, Sold: 11, Stock: 0, Oversold: 1}}
	m.Restart = &fault.Restart{Nodes: []int{0, 1, 2}, Restarted: true, At: time.Second, Back: time.Second, GrantedWhileHeld: 1}
	sale := fault.Sale{Strategy: m.Strategy, LockTTL: s.LockTTL, Work: s.Work, Audit: m.Audit}
	why := Line(m)
	if want := m.Restart.Why(sale) + "; "; !strings.HasPrefix(why, want) {
		t.Errorf("why = %q, want it to open with the restart's clause %q", why, want)
	}
	for _, want := range []string{"sold 11 of 10", "1 overlapping sales", "oversold 1", "duplicate orders 0"} {
		if !strings.Contains(why, want) {
			t.Errorf("why = %q, want the figure %q", why, want)
		}
	}
	if got := len(m.Records.Clauses(sale)); got != 1 {
		t.Errorf("%d fault clauses, want 1 (the restart alone acted)", got)
	}
}
