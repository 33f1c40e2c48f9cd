package fault

import (
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// What a run asks of its faults besides the Fault interface. A kind
// implements the optional interfaces below when it needs them; the
// functions beside them ask every fault of a run at once.

// Plan is a run as a fault's Check sees it: its rows, and the backends
// the command line names (zero when the run is not started from one).
type Plan struct {
	// Rows are the strategies of the run's rows; Bucketed those of the
	// rows whose product's stock is split in buckets ("+kK").
	Rows, Bucketed []strategy.Name
	// Targets is true for a fleet someone else started (--targets).
	Targets bool
	// Redis counts the Redis nodes named (--redis); Etcd is true when an
	// etcd cluster is named (--etcd), Sentinels when Sentinels are
	// (--redis-sentinel), Cluster when a Redis Cluster is
	// (--redis-cluster), ZooKeeper when an ensemble is (--zookeeper).
	Redis                               int
	Etcd, Sentinels, Cluster, ZooKeeper bool
	// Sweep is true for a --sweep, which measures throughput.
	Sweep bool
}

// Problems lists what is wrong with faults in a run of p: each one's own
// Check (off ones too), then two faults that are on and strike the same
// row, which would each blur the other's lesson (one fault per row).
func Problems(faults []Fault, p Plan) []string {
	var bad []string
	for _, f := range faults {
		bad = append(bad, f.Check(p)...)
	}
	var on []Fault
	for _, f := range faults {
		if f.On() {
			on = append(on, f)
		}
	}
	for i, a := range on {
		for _, b := range on[i+1:] {
			if i := slices.IndexFunc(p.Rows, func(st strategy.Name) bool { return a.Strikes(st) && b.Strikes(st) }); i >= 0 {
				bad = append(bad, fmt.Sprintf("%s: not with --%s: both strike the %s row (one fault per row)", Name(a), Name(b), p.Rows[i]))
			}
		}
	}
	return bad
}

// needsRow is a Check's line for a fault on that strikes no row of p.
func needsRow(f Fault, p Plan, rows string) []string {
	if f.On() && len(p.Rows) > 0 && !slices.ContainsFunc(p.Rows, f.Strikes) {
		return []string{fmt.Sprintf("%s: needs %s in --strategies", Name(f), rows)}
	}
	return nil
}

// Name is the name of f's switch: the first of its flags in
// alphabetical order, which every fault makes the flag that switches it on
// ("crash", "failover", "redis-restart"; TestNameSwitchesEveryFaultOn
// holds every kind to it). Messages and the report name a fault by it.
func Name(f Fault) string { return flagsOf(f)[0].Name }

// Args are f's flags as a command line would repeat them, in alphabetical
// order, those at their zero value left out: ["--redis-restart", "3",
// "--restart-delay", "1s"], ["--failover", "--failovers", "3"].
func Args(f Fault) []string {
	var out []string
	for _, fl := range flagsOf(f) {
		switch v := fl.Value.String(); {
		case v == "" || v == "0" || v == "0s" || v == "false":
		case isBool(fl):
			out = append(out, "--"+fl.Name)
		default:
			out = append(out, "--"+fl.Name, v)
		}
	}
	return out
}

// Values are every flag of f with its value, as report.json records them.
func Values(f Fault) map[string]string {
	out := map[string]string{}
	for _, fl := range flagsOf(f) {
		out[fl.Name] = fl.Value.String()
	}
	return out
}

// flagsOf are f's flags, in alphabetical order, read by registering them
// on a flag set of their own (which writes f's values back into f: not
// while an attack that f strikes runs).
func flagsOf(f Fault) []*flag.Flag {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	f.Flags(fs)
	var out []*flag.Flag
	fs.VisitAll(func(fl *flag.Flag) { out = append(out, fl) })
	return out
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// A Defaulter is a fault whose lesson needs a sale of its own: when it is
// on, the command line sets these flags to these values unless it gave
// them, in order.
type Defaulter interface {
	Defaults() []Default
}

// Default is one flag a Defaulter sets, and its value as the command line
// would write it.
type Default struct{ Flag, Value string }

// Defaults are the flags the faults that are on set unless given, in the
// faults' order.
func Defaults(faults []Fault) []Default {
	var out []Default
	for _, f := range faults {
		if d, ok := f.(Defaulter); ok && f.On() {
			out = append(out, d.Defaults()...)
		}
	}
	return out
}

// A Breaker is a fault the lesson expects to break rows that otherwise
// claim to be safe: Breaks reports whether it breaks a row of strategy st
// whose lock lives ttl.
type Breaker interface {
	Breaks(st strategy.Name, ttl time.Duration) bool
}

// Breaks reports whether one of faults is expected to break a row of st
// with a lock TTL of ttl: its oversell is the lesson, not a defect.
func Breaks(faults []Fault, st strategy.Name, ttl time.Duration) bool {
	return slices.ContainsFunc(faults, func(f Fault) bool {
		b, ok := f.(Breaker)
		return ok && f.On() && b.Breaks(st, ttl)
	})
}

// A Provisioner is a fault that needs something of a fleet the load
// generator starts: Provision marks it in cfg.
type Provisioner interface {
	Provision(cfg *fleet.FleetConfig)
}

// Provision marks in cfg what the faults that are on need of the fleet.
func Provision(faults []Fault, cfg *fleet.FleetConfig) {
	for _, f := range faults {
		if p, ok := f.(Provisioner); ok && f.On() {
			p.Provision(cfg)
		}
	}
}
