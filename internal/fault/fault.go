// Package fault holds the faults a scenario can inject into an attack,
// one file each: a node kill (kill.go), an empty restart (restart.go), a
// Sentinel failover (failover.go) and a shop's crash (crash.go). Each is a
// value the attack arms before its first click and stops after its last
// answer; it fires when its own rule says, and leaves in Records what it
// measured, and in its record's Why its clause of the row's why-line.
//
// A fault value serves one attack: the attack calls Arm once, from its own
// goroutine, then Stop once, after closing Attack.Stopped. The fault's own
// goroutines live between the two.
package fault

import (
	"context"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/fleet"
	"github.com/flashsale/flashsale/internal/ledger"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Attack is what a fault knows of the attack it strikes. The attack fills
// it before Arm; the fault only reads it.
type Attack struct {
	// Strategy is the row's strategy; Product the id of the product it
	// sells; Work the product's work inside the critical section.
	Strategy strategy.Name
	Product  string
	Work     time.Duration
	// Fleet is the fleet under attack; Shop its first shop's admin API.
	Fleet *fleet.Fleet
	Shop  *fleet.API
	// Expected is the attack's expected length: the crowd's clicks at the
	// rate, capped by the run's duration.
	Expected time.Duration
	// Stopped closes once the attack's last answer is in.
	Stopped <-chan struct{}
}

// Records are what the faults of one attack measured, one field per fault,
// nil where that fault did not act. The scenario's result embeds it.
type Records struct {
	// Kill records the nodes --redlock-kill or --etcd-kill took down.
	Kill *Kill
	// Restart records the nodes --redis-restart restarted empty.
	Restart *Restart
	// Failover records the --failover rounds.
	Failover *Failover
	// Crash records the --crash kills.
	Crash *Crash
}

// Clauses are the faults' clauses of the row's why-line, one per fault
// that acted, in a fixed order: failover, crash, kill, restart. The
// why-line puts them before the strategy's own clause.
func (r Records) Clauses(s Sale) []string {
	var out []string
	add := func(acted bool, c interface{ Why(Sale) string }) {
		if acted {
			out = append(out, c.Why(s))
		}
	}
	add(r.Failover != nil, r.Failover)
	add(r.Crash != nil, r.Crash)
	add(r.Kill != nil, r.Kill)
	add(r.Restart != nil, r.Restart)
	return out
}

// Sale is what a fault's why-clause may cite besides its own record: the
// row's strategy and product settings, the shop's audit, and the answers.
type Sale struct {
	Strategy      strategy.Name
	LockTTL, Work time.Duration
	Audit         ledger.Audit
	Results       vegeta.Results
}

// poll asks cond every watchEveryPass until it holds; it reports false if
// stopped closes or ctx ends first.
func poll(ctx context.Context, stopped <-chan struct{}, cond func() bool) bool {
	return pollEvery(ctx, stopped, watchEveryPass, cond)
}

// pollEvery is poll, asking every d.
func pollEvery(ctx context.Context, stopped <-chan struct{}, d time.Duration, cond func() bool) bool {
	for !cond() {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-stopped:
			t.Stop()
			return false
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	return true
}

// waitUntil waits until t; false if stopped closed or ctx ended first.
func waitUntil(ctx context.Context, stopped <-chan struct{}, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-stopped:
		return false
	case <-ctx.Done():
		return false
	}
}

// plural picks one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
