package scenario

import (
	"fmt"
	"github.com/flashsale/flashsale/internal/ledger"
	"net/http"
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
func lateCommitLine(s Settings, m *ModeResult, overlaps int) string {
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
func naiveOutlived(s Settings, m *ModeResult, stalls float64, outlives bool, overlaps int) string {
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

// afterKill says what the answers to the requests sent after a kill were:
// refused (503), orders, or sold out. A kill after the sale sold out
// refused nothing, and says so.
func afterKill(m *ModeResult) string {
	k := m.Kill
	if k == nil || len(m.Results) == 0 {
		return ""
	}
	begin := m.Results[0].Timestamp
	for _, r := range m.Results {
		if r.Timestamp.Before(begin) {
			begin = r.Timestamp
		}
	}
	at := begin.Add(k.At)
	var sent, refused, created, soldOut int
	for i := range m.Results {
		r := &m.Results[i]
		if r.Timestamp.Before(at) {
			continue
		}
		sent++
		switch kind := ledger.Classify(r); {
		case r.Code == http.StatusServiceUnavailable:
			refused++
		case kind == ledger.KindCreated:
			created++
		case kind == ledger.KindSoldOut:
			soldOut++
		}
	}
	switch {
	case sent == 0:
		return "; no request was sent after it"
	case created == 0 && refused == 0 && soldOut > 0 && m.Audit.Sold >= m.Audit.InitialStock:
		return fmt.Sprintf("; of the %d requests sent after it none was refused and none made an order (%d were told sold out): the product had sold out before the kill", sent, soldOut)
	}
	return fmt.Sprintf("; of the %d requests sent after it, %d were refused (503), %d made an order, %d were told sold out", sent, refused, created, soldOut)
}
