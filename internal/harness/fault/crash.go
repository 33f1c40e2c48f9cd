package fault

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// ShopCrash is --crash, the fault a flash sale's worst day brings: a shop
// process killed in the middle of the sale. Each attack SIGKILLs a shop
// Kills times, at k/(Kills+1) of the attack's expected length
// (the crowd's clicks at the rate, capped by Duration), rotating over the
// shops (kill k hits shop (k-1) mod shops), and starts it again on the
// same port at once; it counts as back once its /readyz answers 200.
//
// A SIGKILL gives the process no last word: no deferred call, no graceful
// shutdown, no lock released, no reservation given back. What it had in
// flight is what the load generator had sent it before the kill and got
// its result for after it (each result's timestamp and latency say when).
// Those requests end with no answer (EOF, connection reset), and so does
// every click sent to the shop until it is back (connection refused): the
// crowd keeps clicking on the shop it was given, as a client that talks to
// one replica does. Every such request is an error in the table, never a
// success. A load balancer with health checks would stop sending to the
// dead shop after its check interval, typically seconds, longer than the
// restart here takes.
//
// After the attack the load generator checks what the crash may not have
// broken: oversold and duplicate orders (the shop's audit), every buyer
// answered 201 or 202 has an order row (tally.Unwritten), and, for
// redis-decr, Redis's stock against the database's: it rereads the audit
// until the drift is 0, for up to crashDriftWithin.

// crashDriftWithin is how long the load generator waits, after a --crash
// attack, for redis-decr's drift to come back to 0 before it reports it.
const crashDriftWithin = 15 * time.Second

// The sale of a --crash run, and why (Defaults puts it in, unless told
// otherwise):
//
//   - the rows that claim to stay exact through a shop's death, the
//     lock-free ones and the fenced ones. A killed holder of a lua or
//     redlock lock is a stall that never ends, which its TTL already
//     covers; off and naive oversell without any kill.
//   - CrashStock, 600 units: the lock-free rows sell one unit to nearly
//     every buyer's first click, about 125 a second at the default rate,
//     and sell 100 units out within the first second, before the first
//     kill. 600 units last about five seconds, past the kills at a third
//     and two thirds of the default crowd's six seconds of clicks: the
//     shops are killed while they sell. (The fenced rows sell more slowly,
//     and sell through the kills either way.)
const (
	CrashStock = 600
	crashModes = "fenced,sql-atomic,sql-one-trip,redis-decr,redis-queue,fenced+batch"
	// MaxCrash bounds --crash: each kill costs a shop's restart.
	MaxCrash = 20
)

func init() { register(func() Fault { return new(ShopCrash) }) }

// ShopCrash kills and restarts shops Kills times in each attack (see the
// top of this file). It needs a fleet whose shops are processes of its
// own (fleet.Fleet.Processes).
type ShopCrash struct{ Kills int }

// Flags registers --crash.
func (sc *ShopCrash) Flags(fs *flag.FlagSet) {
	fs.IntVar(&sc.Kills, "crash", sc.Kills, "SIGKILL a shop process N times in each attack, at 1/(N+1), 2/(N+1)... of it, rotating over the shops, and start it again on its port at once (back once its /readyz answers); the shops then run as child processes, this binary re-executed, their output in shop-<n>.log in the report folder; clicks sent to a dead shop count as errors; not with --targets (default 0: shops in process, none killed)")
}

// On reports whether shops are killed.
func (sc *ShopCrash) On() bool { return sc.Kills != 0 }

// Strikes reports true: every attack's shops are killed.
func (sc *ShopCrash) Strikes(strategy.Name) bool { return true }

// Check says what is wrong with --crash in a run of p.
func (sc *ShopCrash) Check(p Plan) []string {
	var bad []string
	if sc.Kills < 0 || sc.Kills > MaxCrash {
		bad = append(bad, fmt.Sprintf("crash: %d, want 0..%d shop kills per attack", sc.Kills, MaxCrash))
	}
	if sc.On() && p.Targets {
		bad = append(bad, "crash: not with --targets: the load generator kills only shop processes it started (drop --targets)")
	}
	return bad
}

// Ready says how the shops die.
func (sc *ShopCrash) Ready(fl *fleet.Fleet) (string, error) {
	if !fl.Processes() {
		return "", fmt.Errorf("%w: --crash needs shops the load generator started as processes of its own (fleet.FleetConfig.Processes)", ErrNoControl)
	}
	return "shop processes SIGKILLed by their pid and started again on their port", nil
}

// Provision has the fleet run its shops as child processes.
func (sc *ShopCrash) Provision(cfg *fleet.FleetConfig) { cfg.Processes = true }

// Defaults are the rows and the stock the kills need (see above).
func (sc *ShopCrash) Defaults() []Default {
	return []Default{{"strategies", crashModes}, {"stock", fmt.Sprint(CrashStock)}}
}

// Crash records one attack's --crash kills and what the load generator
// checked after them.
type Crash struct {
	// Planned is ShopCrash.Kills; Kills are those that happened.
	Planned int
	Kills   []CrashKill
	// Answered counts the 201 and 202 answers that named an order;
	// WithoutOrder those whose order has no row in the database (-1 if
	// the database could not be read).
	Answered, WithoutOrder int
	// Drift is redis-decr's drift at its last reading after the attack,
	// nil for the other rows; DriftWaited how long it took to read 0, or
	// how long it was waited for in vain.
	Drift       *int
	DriftWaited time.Duration
	// Err says why a kill or a restart failed.
	Err string

	began time.Time // the attack's start, as the kills' times count it
}

// crashing is a crash armed in one attack.
type crashing struct {
	attack  *Attack
	out     chan *Crash
	results vegeta.Results
	rec     *Crash // what Stop recorded, for Settle
}

// CrashKill is one SIGKILL of a shop.
type CrashKill struct {
	// Shop is the shop's index (0-based) in Fleet.Targets; PID the process
	// killed, NewPID the one started in its place (0 if none started).
	Shop        int
	PID, NewPID int
	// At is the kill, Back the restarted shop's first 200 on /readyz,
	// both since the attack began (Back -1 if it never came back).
	At, Back time.Duration
	// InFlight counts the requests sent to the shop before the kill whose
	// result came after it; Cut those of them that got no answer (so Cut
	// never exceeds InFlight); Refused those sent from the kill until it
	// was back that got none.
	InFlight, Cut, Refused int
}

// shopOf is the index in shops of the shop url is sent to, -1 if none.
func shopOf(shops []string, url string) int {
	for i, s := range shops {
		if strings.HasPrefix(url, strings.TrimRight(s, "/")+"/") {
			return i
		}
	}
	return -1
}

// measure fills each kill's InFlight, Cut and Refused from the attack's
// results, all three by the same clock: a result's timestamp (when Vegeta
// took the click) and its latency (when the answer or the error came).
func (c *Crash) measure(results vegeta.Results, shops []string) {
	for k := range c.Kills {
		kill := &c.Kills[k]
		at := c.began.Add(kill.At)
		back := time.Now()
		if kill.Back >= 0 {
			back = c.began.Add(kill.Back)
		}
		for _, r := range results {
			if shopOf(shops, r.URL) != kill.Shop {
				continue
			}
			switch {
			case r.Timestamp.Before(at) && !r.Timestamp.Add(r.Latency).Before(at):
				kill.InFlight++
				if r.Code == 0 {
					kill.Cut++
				}
			case r.Code == 0 && !r.Timestamp.Before(at) && r.Timestamp.Before(back):
				kill.Refused++
			}
		}
	}
}

// Arm starts the kills' clock for a. A kill whose time comes after
// a.Stopped closed is not made.
func (sc *ShopCrash) Arm(ctx context.Context, a *Attack) (Armed, error) {
	c := &crashing{attack: a, out: make(chan *Crash, 1)}
	stopped, expected := a.Stopped, a.Expected
	began := time.Now()
	go func() {
		rec := &Crash{Planned: sc.Kills, began: began}
		defer func() { c.out <- rec }()
		for k := 1; k <= rec.Planned; k++ {
			at := began.Add(expected * time.Duration(k) / time.Duration(rec.Planned+1))
			if !waitUntil(ctx, stopped, at) {
				return
			}
			i := (k - 1) % len(a.Fleet.Targets)
			kill := CrashKill{Shop: i, At: time.Since(began), Back: -1}
			pid, err := a.Fleet.KillShop(i)
			kill.PID = pid
			if err == nil {
				// On a context of its own: the shop comes back even after
				// Ctrl-C, and the fleet's Close then stops it. RestartShop
				// bounds its own wait.
				kill.NewPID, err = a.Fleet.RestartShop(context.WithoutCancel(ctx), i)
				if err == nil {
					kill.Back = time.Since(began)
				}
			}
			rec.Kills = append(rec.Kills, kill)
			if err != nil {
				rec.Err = err.Error()
				return
			}
		}
	}()
	return c, nil
}

// Stop waits until the shop being restarted, if any, is back (the audit
// that follows reads every shop) and records the kills, with what each
// cut from the results. A kill or restart that failed is its error: the
// audit would not be whole.
func (c *crashing) Stop(_ context.Context, results vegeta.Results) (Record, error) {
	rec := <-c.out
	c.results, c.rec = results, rec
	rec.measure(results, c.attack.Fleet.Targets)
	return rec, rec.failed()
}
