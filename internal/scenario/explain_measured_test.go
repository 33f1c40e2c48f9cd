package scenario

import (
	"github.com/flashsale/flashsale/internal/ledger"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// lateRow is a row of mode that sold all 100 units with n late commits and
// the given lost updates.
func lateRow(mode Mode, late int64, overlaps int) *ModeResult {
	sold := 100 + overlaps
	return &ModeResult{Mode: mode, Audit: ledger.Audit{InitialStock: 100, Sold: sold, Stock: 0, Oversold: overlaps, Consistent: overlaps == 0},
		Events: ledger.Events{LateCommits: late}, Planned: 10, Sent: 10}
}

func TestWhyLateCommitSaysOnlyWhatWasCompared(t *testing.T) {
	s := DefaultSettings()
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
			why := explain(s, lateRow(Mode("lua"), 3, tc.overlaps))
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
	s := DefaultSettings()
	s.LockTTL, s.LateCommit = 100*time.Millisecond, 300*time.Millisecond
	why := explain(s, lateRow(Mode("fenced"), 3, 0))
	if strings.Contains(why, "waited") {
		t.Errorf("why = %q: no wait was measured", why)
	}
	if !strings.Contains(why, "3 commits were held back 300ms (longer than the 100ms TTL)") {
		t.Errorf("why = %q, want the count and the comparison with the TTL", why)
	}
}

// killRow is a redlock row whose answers after a kill at 1s are codes.
func killRow(after ...uint16) *ModeResult {
	t0 := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	m := &ModeResult{Mode: Mode("redlock"), Kill: &Kill{Nodes: []int{0, 1, 2}, At: time.Second},
		Audit: ledger.Audit{InitialStock: 100, Sold: 100, Consistent: true}, Planned: 10, Sent: 10}
	m.Results = append(m.Results, vegeta.Result{Timestamp: t0, Code: 201})
	for i, code := range after {
		r := vegeta.Result{Timestamp: t0.Add(time.Second + time.Duration(i+1)*time.Millisecond), Code: code}
		switch code {
		case 409:
			r.Body = []byte(`{"error":{"code":"sold_out"}}`)
		case 503:
			r.Body = []byte(`{"error":{"code":"unavailable"}}`)
		}
		m.Results = append(m.Results, r)
	}
	return m
}

func TestWhyKillCountsWhatCameAfter(t *testing.T) {
	soldOut := killLine(killRow(409, 409, 409))
	if strings.Contains(soldOut, "refused instead") || !strings.Contains(soldOut, "sold out before the kill") {
		t.Errorf("kill after the sell-out: %q, want it to say the product had sold out, not that orders were refused", soldOut)
	}
	refused := killLine(killRow(503, 503, 409))
	if !strings.Contains(refused, "of the 3 requests sent after it, 2 were refused (503), 0 made an order, 1 were told sold out") {
		t.Errorf("kill with 503s after: %q, want the counts", refused)
	}
	if !strings.Contains(refused, "only 2 of 5 left: no majority") {
		t.Errorf("kill of 3 of 5: %q, want no majority", refused)
	}
}
