package fault

import (
	"flag"
	"fmt"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The sale of a --failover attack (SentinelFailover.Defaults): a lease and
// work that outlast the Sentinels' promotion, so a holder is still inside
// its critical section when the promoted master grants the lock again; a
// stock small enough to run out, so a lost update shows as an oversold
// unit; buyers who click until about the third kill. Why each is what it
// is: docs/failover.md, "Why the sale is shaped so".
const (
	FailoverLockTTL  = 12 * time.Second
	FailoverWork     = 3500 * time.Millisecond
	FailoverStock    = 3
	FailoverUsers    = 280
	FailoverRate     = 40
	FailoverDuration = 30 * time.Second
	// DefaultFailovers is --failovers' default; MaxFailovers bounds it:
	// each round takes seconds.
	DefaultFailovers = 3
	MaxFailovers     = 10
)

// onMaster reports whether m's lock lives on the Sentinel-managed master,
// where a failover can grant it twice: naive, lua and fenced.
func onMaster(st strategy.Name) bool {
	switch st {
	case strategy.Naive, strategy.Lua, strategy.Fenced:
		return true
	}
	return false
}

func init() { register(func() Fault { return &SentinelFailover{Rounds: DefaultFailovers} }) }

// SentinelFailover is --failover, the fault Redlock was written against:
// it kills the Sentinel-managed master of the fleet (fleet.Fleet.Sentinels)
// Rounds times in each attack, each time at a grant its replica has not
// seen (docs/failover.md). It strikes every row: the rows whose lock and stock
// are not on that master show what it does not touch.
type SentinelFailover struct {
	Enabled bool
	Rounds  int
}

// Flags registers --failover and --failovers.
func (sf *SentinelFailover) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&sf.Enabled, "failover", sf.Enabled, "start a master, a replica and three Sentinels (redis-server and redis-sentinel on the PATH) for the shops' single-node locks and stock, and in each attack kill the master right after it granted a lock its held replica never got; see above for the settings it changes unless given (default off)")
	fs.IntVar(&sf.Rounds, "failovers", sf.Rounds, "with --failover, how many times each attack kills the master")
}

// On reports whether --failover was given.
func (sf *SentinelFailover) On() bool { return sf.Enabled }

// Strikes reports true: every attack's master is killed.
func (sf *SentinelFailover) Strikes(strategy.Name) bool { return true }

// Check says what is wrong with the failover's settings in a run of p:
// it kills only a master it started, so never another deployment's.
func (sf *SentinelFailover) Check(p Plan) []string {
	var bad []string
	if sf.Rounds < 0 || sf.Rounds > MaxFailovers {
		bad = append(bad, fmt.Sprintf("failovers: %d, want 0..%d per attack", sf.Rounds, MaxFailovers))
	}
	switch {
	case !sf.Enabled && sf.Rounds != DefaultFailovers:
		bad = append(bad, "failovers: only with --failover")
	case sf.Enabled && p.Sentinels:
		bad = append(bad, "failover: not with --redis-sentinel: the load generator kills only a master it started (SENTINEL FAILOVER would be a polite handover, not the crash --failover shows); drop --targets and --redis-sentinel")
	case sf.Enabled && p.Cluster:
		bad = append(bad, "failover: not with --redis-cluster: the Sentinel-managed master it starts serves the single-node roles, which the cluster would take too (--cluster-failover is the failover on a Redis Cluster)")
	case sf.Enabled && p.Targets:
		bad = append(bad, "failover: --redis-sentinel is missing: with --targets the load generator knows no Sentinels (and would refuse them: it kills only a master it started; drop --targets)")
	case !sf.Enabled && p.Sentinels:
		bad = append(bad, "redis-sentinel: only with --failover, which refuses it (see --help)")
	}
	if sf.Enabled && p.Sweep {
		bad = append(bad, "sweep: not with --failover: a sweep measures throughput, a failover a crash")
	}
	return bad
}

// Ready says how the master dies.
func (sf *SentinelFailover) Ready(fl *fleet.Fleet) (string, error) {
	if fl.Sentinels == nil {
		return "", fmt.Errorf("%w: --failover needs a fleet with a Sentinel set of its own (fleet.FleetConfig.StartSentinels)", ErrNoControl)
	}
	return "the Sentinel-managed master SIGKILLed, its replica's link held through a fault proxy", nil
}

// Provision has the fleet start the master, its replica and the
// Sentinels.
func (sf *SentinelFailover) Provision(cfg *fleet.FleetConfig) { cfg.StartSentinels = true }

// Defaults are the sale a failover needs (see the top of this file).
func (sf *SentinelFailover) Defaults() []Default {
	return []Default{{"lock-ttl", FailoverLockTTL.String()}, {"work", FailoverWork.String()}, {"stall-rate", "0"},
		{"stock", fmt.Sprint(FailoverStock)}, {"users", fmt.Sprint(FailoverUsers)}, {"rate", fmt.Sprint(FailoverRate)},
		{"duration", FailoverDuration.String()}, {"strategies", "naive,lua,fenced,redis-decr,redlock,etcd,sql-atomic"}}
}

// Breaks reports whether failovers break a row of st: lua, whose lock the
// promoted replica grants again. (Naive claims nothing.) Redis-decr stays
// exact, and the shops' sweep repairs the drift a promoted counter leaves.
func (sf *SentinelFailover) Breaks(st strategy.Name, _ time.Duration) bool { return st == strategy.Lua }

// failingOver is a failover armed in one attack; Stop keeps its record
// and the attack's results for Settle (failover_queue.go).
type failingOver struct {
	attack  *Attack
	out     chan *Failover
	rec     *Failover
	results vegeta.Results
}

// Failover records one attack's --failover (or --cluster-failover)
// rounds. Promoted is what Sentinel (the cluster) needed; the rest is what
// the load generator saw.
type Failover struct {
	// Planned is SentinelFailover.Rounds (ClusterFailover.Rounds); Rounds
	// are those that happened.
	Planned int
	Rounds  []FailoverRound
	// Cluster is true when a Redis Cluster promoted the replica
	// (--cluster-failover), false under Sentinel.
	Cluster bool
	// Drift is redis-decr's drift as the load generator saw it; nil for
	// the other strategies.
	Drift *FailoverDrift
	// Queue is where redis-queue's answered orders stood once its queue
	// drained; nil for the other strategies.
	Queue *FailoverQueue
	// Err says why a round could not be done or the set not restored.
	Err string
}

// FailoverDrift is what the load generator saw of redis-decr's drift
// during and after an attack's failovers: the stock on the master the
// Sentinels name, less the database's (driftWatch).
type FailoverDrift struct {
	// Peak is the most units Redis offered that the database did not have
	// (0 if it never offered more).
	Peak int
	// Repaired is the last kill → the drift back to 0 for good; -1 if it
	// was not by the end.
	Repaired time.Duration
	// End is the last drift read, once the sale was over.
	End int
	// Samples counts the readings.
	Samples int
}

// FailoverRound is one kill of the master.
type FailoverRound struct {
	// At is when the master was killed, since the attack began.
	At time.Duration
	// Promoted is kill → every Sentinel names the replica the master.
	Promoted time.Duration
	// Held is how long the replication link was held before the kill;
	// Behind how many bytes of writes the replica was missing then
	// (the master's master_repl_offset less the replica's).
	Held   time.Duration
	Behind int64
	// Caught is true when the kill came right after the master granted
	// the product lock that the replica had not heard of (redis-decr:
	// right after the database sold a unit the replica still offered;
	// redis-queue: right after the master queued an order whose unit the
	// replica still offered).
	Caught bool
	// Phantom is, for redis-decr, the units the promoted counter offered
	// that the database did not have when the Sentinels named it the
	// master: its stock (the replica's when killed) less the database's.
	// -1 for the other strategies.
	Phantom int
	// GrantedTwice counts the other tokens seen holding the lock on the
	// promoted master while the caught holder was still within its work
	// (its grant + Attack.Work): the lock granted twice. -1 where that
	// cannot be seen: no holder caught, or naive, whose lock holds a
	// constant instead of a token.
	GrantedTwice int
	// Resumed is kill → the first order answered again (201, or 409 sold
	// out or duplicate: the shop reached its locks) to a click sent after
	// the kill; -1 if none came.
	Resumed time.Duration
	// AfterCrowd is true when no order was answered again and the
	// promotion came after the last click was sent: nobody was left to
	// answer.
	AfterCrowd bool
	killed     time.Time
}

// Totals sums the rounds: locks granted twice (where watched), and the
// longest promotion and resumption (-1 if sales never resumed after some
// round, leaving out the rounds promoted after the crowd had gone).
func (f *Failover) Totals() (grantedTwice int, promoted, resumed time.Duration) {
	for _, r := range f.Rounds {
		grantedTwice += max(r.GrantedTwice, 0)
		promoted = max(promoted, r.Promoted)
		switch {
		case r.AfterCrowd:
		case r.Resumed < 0 || resumed < 0:
			resumed = -1
		default:
			resumed = max(resumed, r.Resumed)
		}
	}
	return grantedTwice, promoted, resumed
}

// measureResumed fills each round's Resumed and AfterCrowd from the
// attack's results.
func (f *Failover) measureResumed(results vegeta.Results) {
	var lastSent time.Time
	for _, res := range results {
		if res.Timestamp.After(lastSent) {
			lastSent = res.Timestamp
		}
	}
	for i := range f.Rounds {
		r := &f.Rounds[i]
		r.Resumed = -1
		for _, res := range results {
			if (res.Code == 201 || res.Code == 409) && !res.Timestamp.Before(r.killed) {
				if d := res.Timestamp.Add(res.Latency).Sub(r.killed); r.Resumed < 0 || d < r.Resumed {
					r.Resumed = d
				}
			}
		}
		r.AfterCrowd = r.Resumed < 0 && r.killed.Add(r.Promoted).After(lastSent)
	}
}
