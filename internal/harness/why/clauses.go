package why

import (
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/strategy"
)

// A mechanism is a strategy's clause: what guards its stock (guard), then
// the figures that show whether it held. The figures say only what the run
// counted or compared: the audit, the shops' events, the answers, and the
// settings against each other.
type mechanism struct {
	guard   string
	figures []figure
}

// mechanisms are the strategies' clauses, one each. A strategy missing
// here gets its name and the audit's figures (mechanismOf).
var mechanisms = map[strategy.Name]mechanism{
	strategy.Off: {"no lock",
		[]figure{overwritten, oversold, duplicates, widenRace}},
	strategy.Naive: {"SETNX then EXPIRE, a fixed TTL never renewed, DEL to release",
		[]figure{stalled, outworked, sold, overwritten, twoHolders, oversold, duplicates, raiseStall}},
	strategy.Lua: {"an owner token, compare-and-delete and a renewing watchdog held the lock",
		[]figure{stalled, renewed, sold, overwritten, twoHolders, oversold, duplicates}},
	strategy.Redlock: {"an owner token on a majority of five independent Redis nodes, compare-and-delete and a renewing watchdog held the lock",
		[]figure{stalled, renewed, sold, overwritten, twoHolders, oversold, duplicates}},
	strategy.Fenced: {"each grant minted a fencing token, registered in the database before the stock was read",
		[]figure{fencedOut, sold, overwritten, oversold, duplicates}},
	strategy.Etcd: {"each holder's lease and place in the queue were written through the etcd cluster's quorum, waiters were woken in revision order, and the key's revision was registered in the database before the stock was read",
		[]figure{fencedOut, sold, overwritten, oversold, duplicates}},
	strategy.ZooKeeper: {"each holder's ephemeral sequential node was written through the ZooKeeper ensemble's quorum and lived as long as its session, each waiter watched only the node before its own, and the node's creation zxid was registered in the database before the stock was read",
		[]figure{fencedOut, sold, overwritten, oversold, duplicates}},
	strategy.SQLForUpdate: {"no Redis: the database locked the product's row (SQLite: the whole database) from the read (SELECT … FOR UPDATE) to the commit, across the work and any held-back commit",
		[]figure{sold, overwritten, oversold, duplicates}},
	strategy.SQLVersion: {"no lock: each try read the stock and its version, worked, and wrote only if the version had not moved",
		[]figure{triesLost, sold, overwritten, oversold, duplicates}},
	strategy.SQLAtomic: {"no lock: one conditional UPDATE (stock >= quantity) per order and a unique key per buyer",
		[]figure{sold, overwritten, oversold, duplicates}},
	strategy.SQLOneTrip: {"no lock: the conditional UPDATE, the order's INSERT and the COMMIT went to the database in one call (a stored procedure; on SQLite, sql-atomic's transaction), so the row's lock was held for the server's time only",
		[]figure{sold, overwritten, oversold, duplicates}},
	strategy.RedisDecr: {"no lock: one Redis script per order reserved the units (buyer checked before the decrement), then the order was written",
		[]figure{sold, oversold, duplicates, givenBack, reclaimed, drift}},
	strategy.RedisQueue: {"no lock, no wait for the database: one Redis script per click took the units and queued the order",
		[]figure{queued, drained, sold, oversold, duplicates, refused, drift}},
}

// mechanismOf is st's mechanism, or its name and the audit's figures.
func mechanismOf(st strategy.Name) mechanism {
	if m, ok := mechanisms[st]; ok {
		return m
	}
	return mechanism{string(st), []figure{sold, overwritten, oversold, duplicates}}
}

// The audit's figures.

func sold(m Row) (fact, bool) {
	a := m.Audit
	return say("sold", a.Sold, "sold %d of %d", a.Sold, a.InitialStock), true
}

// overwritten is stock + sold − initial stock: sales whose deduction
// another buyer overwrote (see Line).
func overwritten(m Row) (fact, bool) {
	a := m.Audit
	n := max(a.Stock+a.Sold-a.InitialStock, 0)
	return say("overwritten", n, "%d sales overwrote another's stock update", n), true
}

// twoHolders is what an overwritten sale means where a lease alone held
// the stock: two holders were inside at once.
func twoHolders(m Row) (fact, bool) {
	f, _ := overwritten(m)
	return fact{name: "two_holders", value: f.value, text: "two holders at once: a lease is not a mutex"}, f.value > 0
}

func oversold(m Row) (fact, bool) {
	return say("oversold", m.Audit.Oversold, "oversold %d", m.Audit.Oversold), true
}

func duplicates(m Row) (fact, bool) {
	n := m.Audit.DuplicateOrders
	return say("duplicate_orders", n, "duplicate orders %d", n), true
}

// drift is Redis's stock less the database's, or why it is unknown.
func drift(m Row) (fact, bool) {
	a := m.Audit
	switch {
	case a.Drift != nil:
		return say("drift", *a.Drift, "drift between Redis and the database %d", *a.Drift), true
	case a.RedisError != "":
		return fact{name: "drift_unknown", value: 1, text: fmt.Sprintf("drift unknown (%s)", a.RedisError)}, true
	}
	return fact{}, false
}

// The shops' events.

func fencedOut(m Row) (fact, bool) {
	n := m.Events.FencedOut
	return say("fenced_out", n, "%d stale holders fenced out", n), true
}

func givenBack(m Row) (fact, bool) {
	n := m.Events.GivenBack
	return say("given_back", n, "%d reservations given back after a failed write", n), true
}

func reclaimed(m Row) (fact, bool) {
	n := m.Events.Reclaimed
	return say("reclaimed", n, "%d reclaimed by the sweep (their hold ran out with no order written)", n), n > 0
}

func refused(m Row) (fact, bool) {
	n := m.Events.QueueRefused
	return say("queue_refused", n, "%d queued orders refused by the database and their units given back", n), n > 0
}

// The answers.

func queued(m Row) (fact, bool) {
	return say("queued", m.Tally.Queued, "%d answered 202", m.Tally.Queued), true
}

// drained says how long the queue took to drain after the last click.
func drained(m Row) (fact, bool) {
	d := m.Drain
	switch {
	case d == nil:
		return fact{}, false
	case d.Err != "":
		return fact{name: "undrained", value: 1, text: "the queue did not drain: " + d.Err}, true
	}
	return fact{name: "drain_seconds", value: d.Took.Seconds(),
		text: fmt.Sprintf("the shops' consumers wrote them in batches within %.1fs of the last click", d.Took.Seconds())}, true
}

// The settings against each other: a critical section against the TTL.

// outlives reports whether a stall outlasts the TTL.
func outlives(s Settings) bool { return s.Stall > s.LockTTL && s.StallRate > 0 }

// stalled is the critical sections expected to have stalled past the TTL:
// StallRate × 201s, an expectation, so "about".
func stalled(m Row) (fact, bool) {
	s := m.Settings
	n := s.StallRate * float64(m.Tally.Created)
	return fact{name: "stalled", value: n, text: fmt.Sprintf("about %.0f critical sections stalled %v, longer than the %v TTL (%.0f%% of %d orders)",
		n, s.Stall, s.LockTTL, 100*s.StallRate, m.Tally.Created)}, outlives(s)
}

// outworked is work that outlasts the TTL in every critical section.
func outworked(m Row) (fact, bool) {
	s := m.Settings
	return fact{name: "work_over_ttl", value: (s.Work - s.LockTTL).Seconds(),
		text: fmt.Sprintf("every critical section's %v of work outlasts the %v TTL", s.Work, s.LockTTL)}, s.Work > s.LockTTL
}

// renewed is how often the watchdog renews a lease: a third of the TTL.
func renewed(m Row) (fact, bool) {
	every := (m.Settings.LockTTL / 3).Round(time.Millisecond)
	return fact{name: "renewed_every", value: every.Seconds(),
		text: fmt.Sprintf("the watchdog renewed the lock every %v", every)}, outlives(m.Settings)
}

// Hints, where a row that is there to fail did not.

func widenRace(m Row) (fact, bool) {
	return fact{name: "hint", text: "no two buyers overlapped this time: raise --rate or --work to widen the race"}, noOverlap(m)
}

func raiseStall(m Row) (fact, bool) {
	s := m.Settings
	return fact{name: "hint", text: fmt.Sprintf("no critical section outlived the %v TTL (stall %v, work %v): raise --stall above --lock-ttl", s.LockTTL, s.Stall, s.Work)},
		noOverlap(m) && !outlives(s) && s.Work <= s.LockTTL
}

func noOverlap(m Row) bool {
	a := m.Audit
	return a.Stock+a.Sold-a.InitialStock <= 0 && a.DuplicateOrders == 0
}

// lateCommits is the late-commit fault's clause (a product setting the
// shops carry out): how many commits were held back, and, for a row that
// holds a lease, for how long against its TTL.
func lateCommits(m Row) []fact {
	n, s := m.Events.LateCommits, m.Settings
	if n == 0 {
		return nil
	}
	text := fmt.Sprintf("%d commits were held back %v", n, s.LateCommit)
	if holdsLease(m.Strategy) {
		text += fmt.Sprintf(" with their renewals, %s", againstTTL(s))
		if s.LateCommit > s.LockTTL {
			text += ", so their leases ran out"
		}
	}
	return []fact{say("late_commits", n, "%s", text)}
}

// holdsLease reports whether st's stock is guarded by a Redis lock whose
// lease is the --lock-ttl the late commit is compared with. etcd's lease
// is at least a second and ZooKeeper's is the session, so a late commit
// is not measured against the TTL for them.
func holdsLease(st strategy.Name) bool {
	_, locks := st.LockMode()
	return locks && st != strategy.Off && st != strategy.Etcd && st != strategy.ZooKeeper
}

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
