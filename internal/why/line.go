// Package why says in one line why a row of the table came out as it did,
// from what the run measured: the shop's audit and events, the answers,
// the product's settings, and the faults' records, each of which adds its
// own clause (package fault).
package why

import (
	"fmt"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/fault"
	"github.com/flashsale/flashsale/internal/ledger"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Settings are the product settings a why-line compares with each other
// and with what was measured.
type Settings struct {
	LockTTL, Work, Stall, LateCommit time.Duration
	StallRate                        float64
	// Batch is the most buyers one batch serves (batched rows).
	Batch int
}

// Row is what one row measured, as Line reads it.
type Row struct {
	Strategy strategy.Name
	Batched  bool
	Settings Settings
	Audit    ledger.Audit
	Events   ledger.Events
	Tally    ledger.Tally
	// Drain is a queued row's drain (redis-queue), else nil.
	Drain *ledger.Drain
	// Records are the faults' records of the row's attack.
	fault.Records
	// Lost counts the answered orders not written; Sent and Planned the
	// clicks sent and planned.
	Lost, Sent, Planned int
	Results             vegeta.Results
}

// Line says in one line why a row came out as it did. It is safe for
// concurrent use. It is honest about where each number comes from:
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
//   - late commits, fenced-out holders, lost locks and reservations given
//     back are counted by the shops (Events), summed over the fleet.
func Line(m Row) string {
	s := m.Settings
	a := m.Audit
	overlaps := a.Stock + a.Sold - a.InitialStock
	stalls := s.StallRate * float64(m.Tally.Created)
	outlives := s.Stall > s.LockTTL && s.StallRate > 0
	sold := fmt.Sprintf("sold %d of %d", a.Sold, a.InitialStock)
	ev := m.Events
	sale := fault.Sale{Strategy: m.Strategy, LockTTL: s.LockTTL, Work: s.Work, Audit: a, Results: m.Results}
	var b strings.Builder
	for _, c := range m.Records.Clauses(sale) {
		b.WriteString(c)
		b.WriteString("; ")
	}
	switch m.Strategy {
	case strategy.Off:
		if overlaps > 0 || a.DuplicateOrders > 0 {
			fmt.Fprintf(&b, "no lock: %d sales overwrote another buyer's stock update (both read n, both wrote n-1), so %d units were sold that did not exist; %d repeated clicks became duplicate orders",
				overlaps, a.Oversold, a.DuplicateOrders)
		} else {
			b.WriteString("no lock, yet no two buyers overlapped this time: raise --rate or --work to widen the race")
		}
	case strategy.Naive:
		switch {
		case m.Failover != nil:
			fmt.Fprintf(&b, "SETNX on the promoted master: %s, %d sales overwrote another's stock update, oversold %d", sold, max(overlaps, 0), a.Oversold)
		case !outlives && s.Work <= s.LockTTL:
			fmt.Fprintf(&b, "no critical section outlives the %v TTL (stall %v, work %v): %s, %d sales overwrote another's stock update, oversold %d; raise --stall above --lock-ttl",
				s.LockTTL, s.Stall, s.Work, sold, max(overlaps, 0), a.Oversold)
		default:
			b.WriteString(naiveOutlived(s, &m, stalls, outlives, overlaps))
		}
		if a.DuplicateOrders > 0 {
			fmt.Fprintf(&b, ", %d duplicate orders", a.DuplicateOrders)
		}
	case strategy.Lua, strategy.Redlock:
		if ev.LateCommits > 0 {
			b.WriteString(lateCommitLine(s, &m, overlaps))
			break
		}
		switch {
		case m.Failover != nil && m.Strategy == strategy.Lua:
			b.WriteString("an owner token and a renewing watchdog held the lock on one master, and its replica had never heard of it")
		case outlives:
			fmt.Fprintf(&b, "about %.0f critical sections stalled %v, longer than the %v TTL; the watchdog renews the lock every %v", stalls, s.Stall, s.LockTTL, (s.LockTTL / 3).Round(time.Millisecond))
		default:
			b.WriteString("an owner token, compare-and-delete and a renewing watchdog held the lock")
		}
		fmt.Fprintf(&b, ": %s, %d overlapping sales, oversold %d, duplicate orders %d", sold, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
	case strategy.Fenced:
		fmt.Fprintf(&b, "each grant minted a fencing token, registered in the database before the stock was read")
		if ev.LateCommits > 0 {
			fmt.Fprintf(&b, "; %d commits were held back %v (%s)", ev.LateCommits, s.LateCommit, againstTTL(s))
		}
		fmt.Fprintf(&b, ": %d stale holders fenced out, %s, %d overlapping sales, oversold %d, duplicate orders %d",
			ev.FencedOut, sold, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
	case strategy.Etcd:
		b.WriteString("each holder's lease and place in the queue were written through the etcd cluster's quorum, waiters were woken in revision order, and the key's revision was registered in the database before the stock was read")
		if ev.LateCommits > 0 {
			fmt.Fprintf(&b, "; %d commits were held back %v", ev.LateCommits, s.LateCommit)
		}
		fmt.Fprintf(&b, ": %d stale holders fenced out, %s, %d overlapping sales, oversold %d, duplicate orders %d",
			ev.FencedOut, sold, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
	case strategy.SQLForUpdate:
		b.WriteString(forUpdateLine(s, &m, overlaps))
	case strategy.SQLVersion:
		b.WriteString(versionLine(s, &m, overlaps))
	case strategy.SQLAtomic:
		b.WriteString("no lock: one conditional UPDATE (stock >= quantity) per order and a unique key per buyer")
		if ev.LateCommits > 0 {
			fmt.Fprintf(&b, "; %d commits were held back %v", ev.LateCommits, s.LateCommit)
		}
		fmt.Fprintf(&b, ": %s, %d lost updates, oversold %d, duplicate orders %d", sold, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
	case strategy.RedisDecr:
		b.WriteString("no lock: one Redis script per order reserved the units (buyer checked before the decrement), then the order was written")
		if ev.LateCommits > 0 {
			fmt.Fprintf(&b, "; %d commits were held back %v after Redis had reserved their units", ev.LateCommits, s.LateCommit)
		}
		fmt.Fprintf(&b, ": %s, oversold %d, duplicate orders %d, %d reservations given back after a failed write", sold, a.Oversold, a.DuplicateOrders, ev.GivenBack)
		if ev.Reclaimed > 0 {
			fmt.Fprintf(&b, ", %d reclaimed by the sweep (their hold ran out with no order written)", ev.Reclaimed)
		}
		switch {
		case a.Drift != nil && *a.Drift != 0 && m.Failover != nil:
			fmt.Fprintf(&b, ", drift between Redis and the database %d, not repaired: a promoted counter had not heard of some reservations, and the shops' sweep had not lowered it to the database's stock by the audit", *a.Drift)
		case a.Drift != nil && m.Crash != nil:
			b.WriteString(m.Crash.DriftWhy(*a.Drift))
		case a.Drift != nil:
			fmt.Fprintf(&b, ", drift between Redis and the database %d", *a.Drift)
		case a.RedisError != "":
			fmt.Fprintf(&b, ", drift unknown (%s)", a.RedisError)
		}
	case strategy.RedisQueue:
		fmt.Fprintf(&b, "no lock, no wait for the database: one Redis script per click took the units and queued the order (%d answered 202)", m.Tally.Queued)
		if d := m.Drain; d != nil && d.Err == "" {
			fmt.Fprintf(&b, ", and the shops' consumers wrote them in batches within %.1fs of the last click", d.Took.Seconds())
		} else if d != nil {
			fmt.Fprintf(&b, ", and the queue did not drain: %s", d.Err)
		}
		fmt.Fprintf(&b, ": %s, oversold %d, duplicate orders %d", sold, a.Oversold, a.DuplicateOrders)
		if ev.QueueRefused > 0 {
			fmt.Fprintf(&b, ", %d queued orders refused by the database and their units given back", ev.QueueRefused)
		}
		switch {
		case a.Drift != nil:
			fmt.Fprintf(&b, ", drift between Redis and the database %d", *a.Drift)
		case a.RedisError != "":
			fmt.Fprintf(&b, ", drift unknown (%s)", a.RedisError)
		}
	}
	if m.Lost > 0 {
		fmt.Fprintf(&b, "; %d buyers answered 201 or 202 have no order", m.Lost)
	}
	if m.Batched && ev.Batches > 0 {
		fmt.Fprintf(&b, "; batched: %d buyers answered in %d transactions under one lease each (%.1f per batch, at most %d)",
			ev.BatchedBuyers, ev.Batches, float64(ev.BatchedBuyers)/float64(ev.Batches), s.Batch)
	}
	if ev.LocksLost > 0 {
		fmt.Fprintf(&b, "; %d holders found their lock lost before writing and wrote nothing (503 lock_lost)", ev.LocksLost)
	}
	if n := m.Tally.ErrorCount(); n > 0 {
		fmt.Fprintf(&b, "; cost: %s", errorSummary(m.Tally))
	}
	if m.Sent < m.Planned {
		fmt.Fprintf(&b, "; --duration ended the attack after %d of %d clicks", m.Sent, m.Planned)
	}
	return b.String()
}

// errorSummary lists the error answers, most frequent first, e.g.
// "503 lock_timeout×12, 503 unavailable×3".
func errorSummary(t ledger.Tally) string {
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
