package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
)

// explain says in one line why a mode's row came out as it did. It is
// honest about where each number comes from:
//
//   - overlaps is measured by the shop's audit: stock + sold − initial
//     stock. Each unit of it is a sale whose stock deduction another buyer,
//     inside the critical section at the same time, overwrote (both read n,
//     both wrote n−1). Zero means no two critical sections ever overlapped
//     on a sale.
//   - stalls is an expectation, not a count: the shop draws a stall for
//     each sale that passed its checks (a 201) with probability StallRate,
//     so StallRate × 201s critical sections are expected to have stalled.
//     Client-side latency cannot count them: buyers queued behind a stall
//     are as slow as the stalled one.
func explain(s Settings, m *ModeResult) string {
	a := m.Audit
	overlaps := a.Stock + a.Sold - a.InitialStock
	stalls := s.StallRate * float64(m.Tally.Created)
	outlives := s.Stall > s.LockTTL && s.StallRate > 0
	sold := fmt.Sprintf("sold %d of %d", a.Sold, a.InitialStock)
	var b strings.Builder
	switch m.Mode {
	case dlock.ModeOff:
		if overlaps > 0 || a.DuplicateOrders > 0 {
			fmt.Fprintf(&b, "no lock: %d sales overwrote another buyer's stock update (both read n, both wrote n-1), so %d units were sold that did not exist; %d repeated clicks became duplicate orders",
				overlaps, a.Oversold, a.DuplicateOrders)
		} else {
			b.WriteString("no lock, yet no two buyers overlapped this time: raise --rate or --work to widen the race")
		}
	case dlock.ModeNaive:
		switch {
		case !outlives && s.Work <= s.LockTTL:
			fmt.Fprintf(&b, "no critical section outlives the %v TTL (stall %v, work %v), so SETNX held: %s; raise --stall above --lock-ttl",
				s.LockTTL, s.Stall, s.Work, sold)
		default:
			fmt.Fprintf(&b, "about %.0f critical sections stalled %v, past the %v TTL (%.0f%% of %d orders): the key expired under the holder, the next buyer got in, and the holder's DEL then freed that buyer's lock; %d sales overwrote another's stock update: oversold %d",
				stalls, s.Stall, s.LockTTL, 100*s.StallRate, m.Tally.Created, overlaps, a.Oversold)
		}
		if a.DuplicateOrders > 0 {
			fmt.Fprintf(&b, ", %d duplicate orders", a.DuplicateOrders)
		}
	case dlock.ModeLua, dlock.ModeRedlock:
		if m.Mode == dlock.ModeRedlock && m.Kill != nil {
			b.WriteString(killLine(m))
			b.WriteString("; ")
		}
		if outlives {
			fmt.Fprintf(&b, "about %.0f critical sections stalled %v, past the %v TTL, and the watchdog renewed the lock every %v through them", stalls, s.Stall, s.LockTTL, (s.LockTTL / 3).Round(time.Millisecond))
		} else {
			b.WriteString("an owner token, compare-and-delete and a renewing watchdog held the lock")
		}
		fmt.Fprintf(&b, ": %s, %d overlapping sales, oversold %d, duplicate orders %d", sold, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
	}
	if n := m.Tally.ErrorCount(); n > 0 {
		fmt.Fprintf(&b, "; cost: %s", errorSummary(m.Tally))
	}
	if m.Sent < m.Planned {
		fmt.Fprintf(&b, "; --duration ended the attack after %d of %d clicks", m.Sent, m.Planned)
	}
	return b.String()
}

// killLine describes a --redlock-kill.
func killLine(m *ModeResult) string {
	k := m.Kill
	names := make([]string, len(k.Nodes))
	for i, n := range k.Nodes {
		names[i] = fmt.Sprint(n + 1)
	}
	line := fmt.Sprintf("nodes %s of 5 went down at %v", strings.Join(names, ","), k.At.Round(10*time.Millisecond))
	if up := 5 - len(k.Nodes); up >= 3 {
		line += fmt.Sprintf(", %d of 5 still a majority", up)
	} else {
		line += fmt.Sprintf(", only %d of 5 left: no majority, so orders were refused instead of risked", up)
	}
	if k.Err != "" {
		line += " (" + k.Err + ")"
	}
	return line
}

// errorSummary lists the error answers, most frequent first, e.g.
// "503 lock_timeout×12, 503 unavailable×3".
func errorSummary(t Tally) string {
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range t.Errors {
		all = append(all, kv{k, n})
	}
	slices.SortFunc(all, func(a, b kv) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.k, b.k)
	})
	parts := make([]string, len(all))
	for i, e := range all {
		parts[i] = fmt.Sprintf("%s×%d", e.k, e.n)
	}
	return strings.Join(parts, ", ")
}
