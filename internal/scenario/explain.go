package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/fleet"
	"github.com/flashsale/flashsale/internal/ledger"
	"github.com/flashsale/flashsale/internal/strategy"
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
//   - late commits, fenced-out holders, lost locks and reservations given
//     back are counted by the shops (Events), summed over the fleet.
func explain(s Settings, m *ModeResult) string {
	a := m.Audit
	overlaps := a.Stock + a.Sold - a.InitialStock
	stalls := s.StallRate * float64(m.Tally.Created)
	outlives := s.Stall > s.LockTTL && s.StallRate > 0
	sold := fmt.Sprintf("sold %d of %d", a.Sold, a.InitialStock)
	ev := m.Events
	var b strings.Builder
	if m.Failover != nil {
		b.WriteString(failoverLine(s, m))
		b.WriteString("; ")
	}
	if m.Crash != nil {
		b.WriteString(crashLine(m))
		b.WriteString("; ")
	}
	switch m.Mode.Strategy() {
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
			b.WriteString(naiveOutlived(s, m, stalls, outlives, overlaps))
		}
		if a.DuplicateOrders > 0 {
			fmt.Fprintf(&b, ", %d duplicate orders", a.DuplicateOrders)
		}
	case strategy.Lua, strategy.Redlock:
		if m.Mode.Strategy() == strategy.Redlock && m.Kill != nil {
			b.WriteString(killLine(m))
			b.WriteString("; ")
		}
		if ev.LateCommits > 0 {
			b.WriteString(lateCommitLine(s, m, overlaps))
			break
		}
		switch {
		case m.Restart != nil:
			b.WriteString(restartLine(s, m)) // what held, as far as it was seen
		case m.Failover != nil && m.Mode.Strategy() == strategy.Lua:
			b.WriteString("an owner token and a renewing watchdog held the lock on one master, and its replica had never heard of it")
		case outlives:
			fmt.Fprintf(&b, "about %.0f critical sections stalled %v, longer than the %v TTL; the watchdog renews the lock every %v", stalls, s.Stall, s.LockTTL, (s.LockTTL / 3).Round(time.Millisecond))
		default:
			b.WriteString("an owner token, compare-and-delete and a renewing watchdog held the lock")
		}
		fmt.Fprintf(&b, ": %s, %d overlapping sales, oversold %d, duplicate orders %d", sold, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
	case strategy.Fenced:
		if m.Restart != nil {
			b.WriteString(restartLine(s, m))
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "each grant minted a fencing token, registered in the database before the stock was read")
		if ev.LateCommits > 0 {
			fmt.Fprintf(&b, "; %d commits were held back %v (%s)", ev.LateCommits, s.LateCommit, againstTTL(s))
		}
		fmt.Fprintf(&b, ": %d stale holders fenced out, %s, %d overlapping sales, oversold %d, duplicate orders %d",
			ev.FencedOut, sold, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
	case strategy.Etcd:
		if m.Kill != nil {
			b.WriteString(killLine(m))
			b.WriteString("; ")
		}
		b.WriteString("each holder's lease and place in the queue were written through the etcd cluster's quorum, waiters were woken in revision order, and the key's revision was registered in the database before the stock was read")
		if ev.LateCommits > 0 {
			fmt.Fprintf(&b, "; %d commits were held back %v", ev.LateCommits, s.LateCommit)
		}
		fmt.Fprintf(&b, ": %d stale holders fenced out, %s, %d overlapping sales, oversold %d, duplicate orders %d",
			ev.FencedOut, sold, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
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
			b.WriteString(crashDriftLine(*a.Drift, m.Crash))
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
	if m.Mode.Batched() && ev.Batches > 0 {
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

// killLine describes a --redlock-kill (of the five Redis nodes) or an
// --etcd-kill (of the three etcd members).
func killLine(m *ModeResult) string {
	k := m.Kill
	what, total := "nodes", 5
	if m.Mode.Strategy() == strategy.Etcd {
		what, total = "members", fleet.EtcdMembers
	}
	line := fmt.Sprintf("%s %s of %d went down at %v", what, nodeList(k.Nodes, 0), total, k.At.Round(10*time.Millisecond))
	if up := total - len(k.Nodes); up > total/2 {
		line += fmt.Sprintf(", %d of %d still a majority", up, total)
	} else {
		line += fmt.Sprintf(", only %d of %d left: no majority", up, total)
	}
	line += afterKill(m)
	if k.Err != "" {
		line += " (" + k.Err + ")"
	}
	return line
}

// restartLine describes a --redis-restart with what the run saw: when the
// nodes went down, how long they stayed down, and, for redlock, how many
// other tokens took a majority while the caught holder's token was still
// on the nodes that were not restarted (Restart.GrantedWhileHeld).
func restartLine(s Settings, m *ModeResult) string {
	r := m.Restart
	if !r.Restarted {
		return "no holder was seen taking the lock before the attack ended, so no node was restarted"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s of %d restarted empty at %v, as soon as a holder was seen taking the lock (a %v lease, %v of work inside)",
		plural(len(r.Nodes), "node", "nodes"), nodeList(r.Nodes, 0), fleet.RedisNodes, r.At.Round(10*time.Millisecond), s.LockTTL, s.Work)
	if r.Delay > 0 {
		fmt.Fprintf(&b, ", and served again %v later", (r.Back - r.At).Round(10*time.Millisecond))
	} else {
		b.WriteString(", and served again at once")
	}
	if m.Mode.Strategy() == strategy.Fenced {
		b.WriteString(" (node 1 held the fenced lock and its fence counter)")
	}
	switch n := r.GrantedWhileHeld; {
	case m.Mode.Strategy() != strategy.Redlock:
	case n < 0:
		b.WriteString("; with every node restarted, when that holder let go could not be seen")
	case n == 0:
		fmt.Fprintf(&b, "; while that holder's token was still on %s %s, the watch (every node read each millisecond) saw no other token hold a majority",
			plural(fleet.RedisNodes-len(r.Nodes), "node", "nodes"), nodeList(nil, len(r.Nodes)))
	default:
		fmt.Fprintf(&b, "; while that holder's token was still on %s %s, %d other %s held a majority of the nodes (two holders at once)",
			plural(fleet.RedisNodes-len(r.Nodes), "node", "nodes"), nodeList(nil, len(r.Nodes)), n, plural(n, "token", "tokens"))
	}
	if r.Err != "" {
		b.WriteString(" (" + r.Err + ")")
	}
	return b.String()
}

// nodeList names nodes from 1: the given ones, or, with nodes nil, those
// from index from to the last.
func nodeList(nodes []int, from int) string {
	if nodes == nil {
		for i := from; i < fleet.RedisNodes; i++ {
			nodes = append(nodes, i)
		}
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = fmt.Sprint(n + 1)
	}
	return strings.Join(names, ",")
}

// plural picks one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
