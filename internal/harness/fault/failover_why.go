package fault

import (
	"fmt"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/strategy"
)

// Why describes an attack's --failover rounds from what the run counted:
// how many, how far behind the replica was, how long Sentinel took, how
// often the lock was granted twice, and when sales resumed.
func (f *Failover) Why(s Sale) string {
	if len(f.Rounds) == 0 {
		line := fmt.Sprintf("0 of %d failovers: the attack ended before the first kill", f.Planned)
		if f.Err != "" {
			line += " (" + f.Err + ")"
		}
		return line
	}
	var b strings.Builder
	caught := 0
	var held time.Duration
	var behind int64
	for _, r := range f.Rounds {
		if r.Caught {
			caught++
		}
		held, behind = max(held, r.Held), max(behind, r.Behind)
	}
	twice, promoted, resumed := f.Totals()
	fmt.Fprintf(&b, "%d of %d failovers", len(f.Rounds), f.Planned)
	switch {
	case onMaster(s.Strategy):
		fmt.Fprintf(&b, " (the master SIGKILLed right after granting a lock its held replica had not heard of, %d of %d times)", caught, len(f.Rounds))
	case s.Strategy == strategy.RedisDecr:
		fmt.Fprintf(&b, " (the master SIGKILLed, its replica's link held, once the database had sold a unit the replica's stock still offered, %d of %d times; when the replica offered none, %v after the hold)",
			caught, len(f.Rounds), failoverMoment)
	case s.Strategy == strategy.RedisQueue:
		fmt.Fprintf(&b, " (the master SIGKILLed, its replica's link held, once it had queued an order whose unit the replica's stock still offered, %d of %d times; when the replica offered none, %v after the hold)",
			caught, len(f.Rounds), failoverMoment)
	default:
		fmt.Fprintf(&b, " (the master SIGKILLed %v after its replica's link was held)", failoverMoment)
	}
	promoter := "the Sentinels named it the master"
	if f.Cluster {
		promoter = "the cluster promoted it"
	}
	fmt.Fprintf(&b, ": the replica was up to %v and %d bytes of writes behind at the kill, and %s within %v",
		held.Round(time.Millisecond), behind, promoter, promoted.Round(10*time.Millisecond))
	switch {
	case onMaster(s.Strategy) && twice == 0 && s.Strategy == strategy.Naive:
		fmt.Fprintf(&b, "; naive's lock holds a constant, so a second holder cannot be told from the first on the wire (the audit below counts what it did); the %v lease was %s", s.LockTTL, leaseAgainst(s.LockTTL, promoted))
	case onMaster(s.Strategy):
		fmt.Fprintf(&b, "; it granted the lock again %d %s while the first holder's %v of work ran (the %v lease, first renewed after %v, was %s)",
			twice, plural(twice, "time", "times"), s.Work, s.LockTTL, (s.LockTTL / 3).Round(time.Millisecond), leaseAgainst(s.LockTTL, promoted))
	case s.Strategy == strategy.RedisDecr:
		b.WriteString("; the stock counter is on that master")
		b.WriteString(driftClause(f))
	case s.Strategy == strategy.RedisQueue:
		b.WriteString("; the stock counter and the stream of accepted orders are on that master")
		b.WriteString(queueClause(f))
	case s.Strategy.Fences():
		// Its dedupe lock is a lua lock on the first Redis node
		// (order.Service.lockersFor).
		b.WriteString("; this row's lock and stock are not on that master (its buyers' dedupe locks are)")
	default:
		b.WriteString("; nothing of this row is on that master")
	}
	afterCrowd := 0
	for _, r := range f.Rounds {
		if r.AfterCrowd {
			afterCrowd++
		}
	}
	switch {
	case afterCrowd == len(f.Rounds):
		b.WriteString("; every promotion came after the last click, so no order was answered again")
	case resumed >= 0 && afterCrowd > 0:
		fmt.Fprintf(&b, "; orders were answered again (201 or 409) within %.1fs of each kill but the last %s, promoted after the last click", resumed.Seconds(), plural(afterCrowd, "one", fmt.Sprint(afterCrowd)))
	case resumed >= 0:
		fmt.Fprintf(&b, "; orders were answered again (201 or 409) within %.1fs of each kill", resumed.Seconds())
	default:
		b.WriteString("; after some kill no later click was answered 201 or 409 again")
	}
	if f.Err != "" {
		b.WriteString(" (" + f.Err + ")")
	}
	return b.String()
}

// driftClause says what the load generator saw of redis-decr's drift
// (Failover.Drift, FailoverRound.Phantom), or "" if it did not watch.
func driftClause(f *Failover) string {
	d := f.Drift
	if d == nil {
		return ""
	}
	var b strings.Builder
	phantom, at := 0, 0
	for i, r := range f.Rounds {
		if r.Phantom > phantom {
			phantom, at = r.Phantom, i+1
		}
	}
	if phantom > 0 {
		fmt.Fprintf(&b, ": promoted after kill %d, it offered %d %s the database had sold (phantom units)", at, phantom, plural(phantom, "unit", "units"))
	}
	switch {
	case d.Samples == 0:
		b.WriteString("; the drift could not be read")
	case d.End > 0 || d.Repaired < 0:
		fmt.Fprintf(&b, "; drift +%d at the peak, not repaired: %+d at the end", d.Peak, d.End)
	case d.Peak > 0:
		fmt.Fprintf(&b, "; drift +%d at the peak, repaired within %.1fs of the last kill, %d at the end (each shop lowers Redis's stock to the database's once a second)",
			d.Peak, d.Repaired.Seconds(), d.End)
	default:
		fmt.Fprintf(&b, "; no drift read, %d at the end", d.End)
	}
	return b.String()
}

// queueClause says where redis-queue's answered orders stood after the
// drain (Failover.Queue), or "" if nobody asked.
func queueClause(f *Failover) string {
	q := f.Queue
	if q == nil {
		return ""
	}
	return fmt.Sprintf(": of %d orders answered 202, %d were written, %d refused by the database after the 202 (each for a unit the promoted counter offered again: the master had taken it after the hold, its replica never heard of it) and %d known to no shop (queued on the master alone, unwritten at the kill, lost with it)",
		q.Answered, q.Created, q.Refused, q.Unknown)
}

// leaseAgainst compares the lease with the slowest promotion: "longer than
// the 2.1s promotion", "shorter than ...".
func leaseAgainst(ttl, promoted time.Duration) string {
	p := promoted.Round(10 * time.Millisecond)
	if ttl > promoted {
		return fmt.Sprintf("longer than the %v promotion", p)
	}
	return fmt.Sprintf("no longer than the %v promotion", p)
}
