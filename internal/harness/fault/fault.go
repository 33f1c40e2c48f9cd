// Package fault holds the faults a scenario can inject into an attack,
// one kind per file, each registered by the file itself (register): a
// Redis node kill (kill.go) and an etcd member kill (kill_etcd.go), an
// empty restart (restart.go), a Sentinel failover (failover.go), a Redis
// Cluster failover (failover_cluster.go) and a shop's crash (crash.go). A kind brings its own flags, says which rows
// it strikes and what it needs, and, in each attack, fires when its own
// rule says and returns what it measured, with its clause of the row's
// why-line. The attack, the command line and the report know none of them
// by name: adding a fault is adding a file.
//
// A Fault value holds the fault's settings, which its flags write; once
// the command line is parsed it is read-only and serves every attack of a
// run. Arm starts it in one attack and returns an Armed value for that
// attack alone: the attack calls Arm once, from its own goroutine, then
// Stop once, after closing Attack.Stopped. The fault's own goroutines live
// between the two.
package fault

import (
	"context"
	"errors"
	"flag"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Fault is one kind of fault with its settings (see the package comment).
type Fault interface {
	// Flags registers the fault's flags on fs, each writing into the
	// fault and defaulting to what it holds.
	Flags(fs *flag.FlagSet)
	// On reports whether the fault's flags switched it on.
	On() bool
	// Strikes reports whether the fault acts in an attack of strategy
	// st: the attack arms only the faults that strike its row.
	Strikes(st strategy.Name) bool
	// Check lists what is wrong with the fault's settings in a run of p,
	// one line per problem, each starting with a flag's name; nil if
	// nothing is. It is asked of faults that are off too.
	Check(p Plan) []string
	// Ready says how the fault will strike fl, for the report, or returns
	// an error wrapping ErrNoControl if fl gives it no way to. It is
	// asked once per run, before the first attack.
	Ready(fl *fleet.Fleet) (how string, err error)
	// Arm starts the fault in one attack, before its first click, and
	// returns once it is armed.
	Arm(ctx context.Context, a *Attack) (Armed, error)
}

// Armed is a fault armed in one attack.
type Armed interface {
	// Stop waits for the fault to finish, puts the fleet back as it was,
	// and returns what the fault measured (nil if it did not fire). An
	// error means the fleet is not whole: the attack ends without an
	// audit. It is called once: a second call may block for ever.
	Stop(ctx context.Context, results vegeta.Results) (Record, error)
}

// Record is what one fault measured in one attack.
type Record interface {
	// Why is the fault's clause of the row's why-line: what it did, with
	// the figures it measured.
	Why(s Sale) string
}

// ErrNoControl is wrapped by Ready's error when the fleet gives a fault
// no way to strike: no control over its nodes, members or shops.
var ErrNoControl = errors.New("fault: the fleet gives no control over what the fault strikes")

// kinds are the registered kinds of fault, in the order their files
// registered them.
var kinds []func() Fault

// register adds a kind of fault: each fault's file calls it from its init
// with a function that returns the fault off, with its defaults.
func register(newFault func() Fault) { kinds = append(kinds, newFault) }

// Kinds returns a fresh value of every kind of fault, off, in a fixed
// order: for a command line to register their flags.
func Kinds() []Fault {
	out := make([]Fault, len(kinds))
	for i, k := range kinds {
		out[i] = k()
	}
	return out
}

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

// Records are what the faults of one attack measured, one record per
// fault that fired, in the order they were armed.
type Records []Record

// Clauses are the records' clauses of the row's why-line, in order.
func (rs Records) Clauses(s Sale) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Why(s)
	}
	return out
}

// Find returns the record of type T in rs, or T's zero value (a nil
// pointer) if no fault left one: fault.Find[*fault.Kill](m.Records).
func Find[T Record](rs Records) T {
	for _, r := range rs {
		if t, ok := r.(T); ok {
			return t
		}
	}
	var zero T
	return zero
}

// Sale is what a fault's why-clause may cite besides its own record: the
// row's strategy and product settings, the shop's audit, and the answers.
type Sale struct {
	Strategy      strategy.Name
	LockTTL, Work time.Duration
	Audit         tally.Audit
	Results       vegeta.Results
}
