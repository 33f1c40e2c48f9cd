package why

import (
	"fmt"
	"strings"
)

// The clauses below say only what the run counted or compared: the
// settings against each other (a late commit against the TTL), the audit,
// the shops' events, and the answers the load generator got.

// againstTTL compares the late commit with the lock TTL: "longer than the
// 100ms TTL", "within the 100ms TTL".
func againstTTL(s Settings) string {
	switch {
	case s.LateCommit > s.LockTTL:
		return fmt.Sprintf("longer than the %v TTL", s.LockTTL)
	case s.LateCommit == s.LockTTL:
		return fmt.Sprintf("as long as the %v TTL", s.LockTTL)
	}
	return fmt.Sprintf("within the %v TTL", s.LockTTL)
}

// lateCommitLine is lua's and redlock's line under --late-commit: how many
// commits were held back and for how long against the TTL, then what the
// audit counted. That a lease ran out is said only when the hold was
// longer than the TTL, and that a next holder read too early only when a
// sale was overwritten.
func lateCommitLine(s Settings, m *Row, overlaps int) string {
	a := m.Audit
	var b strings.Builder
	fmt.Fprintf(&b, "%d commits were held back %v with their renewals, %s", m.Events.LateCommits, s.LateCommit, againstTTL(s))
	if s.LateCommit > s.LockTTL {
		b.WriteString(", so their leases ran out")
	}
	switch {
	case overlaps > 0:
		fmt.Fprintf(&b, "; %d sales overwrote another's stock update (a next holder read the stock before an old commit landed): sold %d of %d, oversold %d (a lease is not a mutex)",
			overlaps, a.Sold, a.InitialStock, a.Oversold)
	default:
		fmt.Fprintf(&b, "; no sale overwrote another's this time: sold %d of %d, oversold %d", a.Sold, a.InitialStock, a.Oversold)
	}
	return b.String()
}

// naiveOutlived is naive's line when a critical section can outlive the
// TTL: the expected stalls (an expectation, so "about"), or the work that
// outlasts the TTL, then what the audit counted.
func naiveOutlived(s Settings, m *Row, stalls float64, outlives bool, overlaps int) string {
	a := m.Audit
	var b strings.Builder
	if outlives {
		fmt.Fprintf(&b, "about %.0f critical sections stalled %v, longer than the %v TTL (%.0f%% of %d orders)",
			stalls, s.Stall, s.LockTTL, 100*s.StallRate, m.Tally.Created)
	}
	if s.Work > s.LockTTL {
		if outlives {
			b.WriteString(", and ")
		}
		fmt.Fprintf(&b, "every critical section's %v of work outlasts the %v TTL", s.Work, s.LockTTL)
	}
	if overlaps > 0 {
		fmt.Fprintf(&b, "; %d sales overwrote another's stock update, so the lock let two buyers in at once: oversold %d", overlaps, a.Oversold)
	} else {
		fmt.Fprintf(&b, "; yet no sale overwrote another's this time: sold %d of %d, oversold %d", a.Sold, a.InitialStock, a.Oversold)
	}
	return b.String()
}
