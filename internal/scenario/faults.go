package scenario

import (
	"context"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/fault"
	"github.com/flashsale/flashsale/internal/fleet"
	"github.com/flashsale/flashsale/internal/ledger"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Fault is one fault of a run (package fault holds them, one file each).
// An attack arms its faults in order before its first click and, once its
// last answer is in and fault.Attack.Stopped has closed, stops them in the
// reverse order; each fault is armed and stopped once, from the attack's
// goroutine.
type Fault interface {
	// Arm starts the fault for a and returns once it is armed. A fault
	// that does not act in a's strategy arms as a no-op.
	Arm(ctx context.Context, a *fault.Attack) error
	// Stop waits for the fault to finish, puts the fleet back as it was,
	// and records what it measured in into. An error means the fleet is
	// not whole: the attack ends without an audit.
	Stop(ctx context.Context, results vegeta.Results, into *fault.Records) error
}

// clickCounter is a fault that sees every click go out and its answer
// come back (a crash counts what each kill cut off). The attack wraps its
// targeter with Targeter after Arm, and calls Answered from the goroutine
// that reads the results.
type clickCounter interface {
	Targeter(vegeta.Targeter) vegeta.Targeter
	Answered(*vegeta.Result)
}

// settler is a fault with a last step after the audit, which it may
// reread into au (a crash waits for redis-decr's drift); lost is how many
// answered orders were not written.
type settler interface {
	Settle(ctx context.Context, au *ledger.Audit, lost int) error
}

// faults are the run's faults, fresh for one attack, in the order they
// are armed: the one place that turns the settings into faults.
func (s Settings) faults() []Fault {
	var out []Fault
	if s.Failovers > 0 {
		out = append(out, &fault.SentinelFailover{Rounds: s.Failovers})
	}
	if s.Crash > 0 {
		out = append(out, &fault.ShopCrash{Kills: s.Crash})
	}
	if s.RedlockKill > 0 || s.EtcdKill > 0 {
		out = append(out, &fault.NodeKill{Redis: s.RedlockKill, Etcd: s.EtcdKill})
	}
	if s.RedisRestart > 0 {
		out = append(out, &fault.EmptyRestart{Nodes: s.RedisRestart, Delay: s.RestartDelay})
	}
	return out
}

// ForRestart returns s with the product a --redis-restart run needs
// (fault.RestartLockTTL, fault.RestartWork, no stalls, fault.RestartStock), keeping every
// setting for which given reports true; given is called with the flag's
// name: "lock-ttl", "work", "stall-rate", "stock".
func (s Settings) ForRestart(given func(flag string) bool) Settings {
	if !given("lock-ttl") {
		s.LockTTL = fault.RestartLockTTL
	}
	if !given("work") {
		s.Work = fault.RestartWork
	}
	if !given("stall-rate") {
		s.StallRate = 0
	}
	if !given("stock") {
		s.Stock = fault.RestartStock
	}
	return s
}

// restarts reports whether --redis-restart acts in m's attack: redlock's
// and fenced's, batched or not. (Fenced's lock and fence counter live on
// node 1 alone, which is restarted first.)
func (s Settings) restarts(m Mode) bool {
	return s.RedisRestart > 0 && fault.RestartActsOn(m.Strategy())
}

// restartBreaks reports whether the run's restart is expected to break m:
// redlock, when a majority of the nodes restart sooner than a lease can
// run out. Fenced is not: its database refuses the second holder's older
// or equal fence.
func (s Settings) restartBreaks(m Mode) bool {
	return m.Strategy() == strategy.Redlock && s.RedisRestart > fleet.RedisNodes/2 && s.RestartDelay < s.LockTTL
}

// FailoverModes are the rows --failover runs unless --modes is given: the
// four that lock or count on the Sentinel-managed master, and three that
// do not (redlock keeps five independent masters, etcd and sql-atomic use
// no Redis for the stock). Off is left out: it oversells without a fault.
func FailoverModes() []Mode {
	return []Mode{"naive", "lua", "fenced", "redis-decr", "redlock", "etcd", "sql-atomic"}
}

// ForFailover returns s with the product and crowd a --failover run needs
// (fault.FailoverLockTTL and its siblings, FailoverModes, no stalls), keeping every setting
// for which given reports true; given is called with the flag's name.
func (s Settings) ForFailover(given func(flag string) bool) Settings {
	set := func(flag string, f func()) {
		if !given(flag) {
			f()
		}
	}
	set("lock-ttl", func() { s.LockTTL = fault.FailoverLockTTL })
	set("work", func() { s.Work = fault.FailoverWork })
	set("stall-rate", func() { s.StallRate = 0 })
	set("stock", func() { s.Stock = fault.FailoverStock })
	set("users", func() { s.Users = fault.FailoverUsers })
	set("rate", func() { s.Rate = fault.FailoverRate })
	set("duration", func() { s.Duration = fault.FailoverDuration })
	set("modes", func() { s.Modes = FailoverModes() })
	return s
}

// failoverBreaks reports whether the run's failovers are expected to
// break m (fault.FailoverBreaks).
func (s Settings) failoverBreaks(m Mode) bool {
	return s.Failovers > 0 && fault.FailoverBreaks(m.Strategy())
}

// The sale of a --crash run, and why (ForCrash puts it in, unless told
// otherwise):
//
//   - CrashModes: the rows that claim to stay exact through a shop's
//     death, the lock-free ones and the fenced ones. A killed holder of a
//     lua or redlock lock is a stall that never ends, which its TTL
//     already covers; off and naive oversell without any kill.
//   - CrashStock, 600 units: the lock-free rows sell one unit to nearly
//     every buyer's first click, about 125 a second at the default rate,
//     and sell 100 units out within the first second, before the first
//     kill. 600 units last about five seconds, past the kills at a third
//     and two thirds of the default crowd's six seconds of clicks: the
//     shops are killed while they sell. (The fenced rows sell more slowly,
//     and sell through the kills either way.)
const CrashStock = 600

// CrashModes are the rows --crash runs unless --modes is given.
func CrashModes() []Mode {
	return []Mode{"fenced", "sql-atomic", "redis-decr", "redis-queue", "fenced+batch"}
}

// ForCrash returns s with the sale a --crash run needs (CrashModes,
// CrashStock), keeping every setting for which given reports true; given
// is called with the flag's name: "modes", "stock".
func (s Settings) ForCrash(given func(flag string) bool) Settings {
	if !given("modes") {
		s.Modes = CrashModes()
	}
	if !given("stock") {
		s.Stock = CrashStock
	}
	return s
}
