package fault

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// ShopCrash is --crash, the fault a flash sale's worst day brings: a shop
// process killed in the middle of the sale. Each attack SIGKILLs a shop
// Kills times, at k/(Crash+1) of the attack's expected length
// (the crowd's clicks at the rate, capped by Duration), rotating over the
// shops (kill k hits shop (k-1) mod shops), and starts it again on the
// same port at once; it counts as back once its /readyz answers 200.
//
// A SIGKILL gives the process no last word: no deferred call, no graceful
// shutdown, no lock released, no reservation given back. What it had in
// flight is what the load generator had sent it and not yet got an answer
// for (inFlight counts them per shop: a request is in flight from the
// moment Vegeta takes it from the targeter until its result arrives).
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
// answered 201 or 202 has an order row (ledger.Unwritten), and, for
// redis-decr, Redis's stock against the database's: it rereads the audit
// until the drift is 0, for up to crashDriftWithin.

// crashDriftWithin is how long the load generator waits, after a --crash
// attack, for redis-decr's drift to come back to 0 before it reports it.
const crashDriftWithin = 15 * time.Second

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
	// DriftWaited is how long the drift took to read 0 after the attack
	// (redis-decr only), or how long it was waited for in vain.
	DriftWaited time.Duration
	// Err says why a kill or a restart failed.
	Err string

	began time.Time // the attack's start, as the kills' times count it
}

// ShopCrash kills and restarts shops during each attack (see the top of
// this file). It needs a fleet whose shops are processes of its own
// (fleet.Fleet.Processes).
type ShopCrash struct {
	Kills int

	attack  *Attack
	counts  *inFlight
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
	// InFlight is what the load generator had sent the shop and not yet
	// got an answer for at the kill.
	InFlight int
	// Cut counts the requests sent to the shop before the kill that got
	// no answer; Refused those sent from the kill until it was back that
	// got none.
	Cut, Refused int
}

// inFlight counts, per shop, the requests handed to Vegeta and not yet
// answered. It is safe for concurrent use.
type inFlight struct {
	shops []string
	n     []atomic.Int64
}

func newInFlight(shops []string) *inFlight {
	return &inFlight{shops: shops, n: make([]atomic.Int64, len(shops))}
}

// shopOf is the index of the shop url is sent to, -1 if none.
func (f *inFlight) shopOf(url string) int {
	for i, s := range f.shops {
		if strings.HasPrefix(url, strings.TrimRight(s, "/")+"/") {
			return i
		}
	}
	return -1
}

// targeter counts each target t hands out as in flight.
func (f *inFlight) targeter(t vegeta.Targeter) vegeta.Targeter {
	return func(tgt *vegeta.Target) error {
		if err := t(tgt); err != nil {
			return err
		}
		if i := f.shopOf(tgt.URL); i >= 0 {
			f.n[i].Add(1)
		}
		return nil
	}
}

// answered counts r's request as no longer in flight. A nil *inFlight
// counts nothing.
func (f *inFlight) answered(r *vegeta.Result) {
	if f == nil {
		return
	}
	if i := f.shopOf(r.URL); i >= 0 {
		f.n[i].Add(-1)
	}
}

// of is shop i's requests in flight now.
func (f *inFlight) of(i int) int { return int(f.n[i].Load()) }

// measure fills each kill's Cut and Refused from the attack's results.
func (c *Crash) measure(results vegeta.Results, shops []string) {
	f := newInFlight(shops)
	for k := range c.Kills {
		kill := &c.Kills[k]
		at := c.began.Add(kill.At)
		back := time.Now()
		if kill.Back >= 0 {
			back = c.began.Add(kill.Back)
		}
		for _, r := range results {
			if r.Code != 0 || f.shopOf(r.URL) != kill.Shop {
				continue
			}
			switch {
			case r.Timestamp.Before(at) && !r.Timestamp.Add(r.Latency).Before(at):
				kill.Cut++
			case !r.Timestamp.Before(at) && r.Timestamp.Before(back):
				kill.Refused++
			}
		}
	}
}

// Arm starts the kills' clock for a. A kill whose time comes after
// a.Stopped closed is not made.
func (c *ShopCrash) Arm(ctx context.Context, a *Attack) error {
	c.attack, c.out = a, make(chan *Crash, 1)
	if c.Kills == 0 || !a.Fleet.Processes() {
		c.out <- nil
		return nil
	}
	c.counts = newInFlight(a.Fleet.Targets)
	counts, stopped, expected := c.counts, a.Stopped, a.Expected
	began := time.Now()
	go func() {
		rec := &Crash{Planned: c.Kills, began: began}
		defer func() { c.out <- rec }()
		for k := 1; k <= rec.Planned; k++ {
			at := began.Add(expected * time.Duration(k) / time.Duration(rec.Planned+1))
			if !waitUntil(ctx, stopped, at) {
				return
			}
			i := (k - 1) % len(a.Fleet.Targets)
			kill := CrashKill{Shop: i, InFlight: counts.of(i), At: time.Since(began), Back: -1}
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
	return nil
}

// Targeter counts each click t hands out as in flight to its shop, for a
// kill to say what it cut. It is called before the first click; the
// targeter it returns is safe for concurrent use.
func (c *ShopCrash) Targeter(t vegeta.Targeter) vegeta.Targeter {
	if c.counts == nil {
		return t
	}
	return c.counts.targeter(t)
}

// Answered counts r's request as no longer in flight. It is called from
// the goroutine that reads the attack's results.
func (c *ShopCrash) Answered(r *vegeta.Result) { c.counts.answered(r) }

// Stop waits until the shop being restarted, if any, is back (the audit
// that follows reads every shop) and records the kills, with what each
// cut from the results. A kill or restart that failed is its error: the
// audit would not be whole.
func (c *ShopCrash) Stop(_ context.Context, results vegeta.Results, into *Records) error {
	rec := <-c.out
	into.Crash, c.results, c.rec = rec, results, rec
	if rec == nil {
		return nil
	}
	rec.measure(results, c.attack.Fleet.Targets)
	return rec.failed()
}
