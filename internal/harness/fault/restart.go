package fault

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/strategy"
)

// --redis-restart is the fault the Redlock description itself warns about:
// a node without persistence that crashes and comes back at once has
// forgotten the locks it granted, and its vote can help a second client to
// a majority while the first still holds the lock. With three of five
// nodes restarted empty under holder A, buyer B is granted the three empty
// nodes (A keeps the other two): two holders, and the stock update of one
// is lost. Redlock's answer is the delayed restart: a node stays down for
// at least the longest TTL, by which time every lease it granted is over;
// --restart-delay plays it.
//
// The restart must land while a holder is inside its critical section,
// every run, not by luck. So the attack watches the product lock's key on
// the nodes and restarts them as soon as a new token holds a majority of
// them (restart_lock.go): in the first milliseconds of that holder's
// critical section. The product it sells then needs the numbers below
// (EmptyRestart.Defaults puts them in, unless told otherwise).

// The product of a --redis-restart run, and why:
//
//   - RestartWork, 150 ms of work between the holder's read of the stock and
//     its write, is the window in which the second holder must get in and
//     read. It does so within tens of milliseconds: the restart drops the
//     shops' pub/sub connections, which wakes every waiting buyer to ask
//     again (dlock's room.gap), and the crowd keeps arriving.
//   - RestartLockTTL, 1 s, outlasts the restart (milliseconds) by far, and
//     puts the holder's first renewal at a third of it, 333 ms: after its
//     write. The holder never learns that it lost its majority, and
//     commits; a renewal before the write would have found the lock lost
//     and rolled the holder back, leaving nothing to show.
//   - No stalls (stall rate 0): a stall would push the write past that
//     renewal.
//   - RestartStock, 10 units: a lost update shows as an oversold unit only
//     once the stock has run out, and one sale at a time at 150 ms each
//     sells 10 units in about two seconds, long before the crowd has
//     clicked.
const (
	RestartLockTTL = time.Second
	RestartWork    = 150 * time.Millisecond
	RestartStock   = 10
)

func init() { register(func() Fault { return new(EmptyRestart) }) }

// EmptyRestart is --redis-restart: it restarts the first Nodes Redis nodes
// empty once in each attack it strikes (redlock's and fenced's, batched
// or not: fenced's lock and fence counter live on node 1 alone, which is
// restarted first), as soon as a holder is seen taking the product lock,
// and keeps them down for Delay.
type EmptyRestart struct {
	Nodes int
	Delay time.Duration
}

// Flags registers --redis-restart and --restart-delay.
func (e *EmptyRestart) Flags(fs *flag.FlagSet) {
	fs.IntVar(&e.Nodes, "redis-restart", e.Nodes, fmt.Sprintf("restart N of the 5 Redis nodes empty (no persistence) in the redlock and fenced attacks, as soon as a holder is seen taking the lock: embedded nodes are closed and replaced by empty ones on the same port; --redis nodes of the embedded shops are reached through the load generator's own proxies, which drop the shops' connections, and lose the product's keys; --redis nodes of a --targets fleet lose the product's keys and every client connection (CLIENT KILL TYPE normal and pubsub). Unless given, --lock-ttl %v, --work %v, --stall-rate 0 and --stock %d, so that the restart lands inside a critical section every run (default 0: none)", RestartLockTTL, RestartWork, RestartStock))
	fs.DurationVar(&e.Delay, "restart-delay", e.Delay, "with --redis-restart, how long the restarted nodes stay down before they serve again, empty (a --targets fleet's nodes are held with CLIENT PAUSE <ms> ALL); at least --lock-ttl is Redlock's delayed restart (default 0: at once)")
}

// On reports whether nodes restart.
func (e *EmptyRestart) On() bool { return e.Nodes != 0 }

// Strikes reports whether st locks on the nodes that restart: redlock and
// fenced.
func (e *EmptyRestart) Strikes(st strategy.Name) bool {
	return st == strategy.Redlock || st == strategy.Fenced
}

// Check says what is wrong with the restart's settings in a run of p.
func (e *EmptyRestart) Check(p Plan) []string {
	var bad []string
	if e.Nodes < 0 || e.Nodes > fleet.RedisNodes {
		bad = append(bad, fmt.Sprintf("redis-restart: %d, want 0..%d of the %d Redis nodes", e.Nodes, fleet.RedisNodes, fleet.RedisNodes))
	}
	switch {
	case e.Delay < 0 || e.Delay > time.Minute:
		bad = append(bad, fmt.Sprintf("restart-delay: %v, want 0..1m0s", e.Delay))
	case e.Delay > 0 && !e.On():
		bad = append(bad, "restart-delay: only with --redis-restart (it is how long the restarted nodes stay down)")
	}
	switch {
	case !e.On():
	case p.Targets && p.Redis == 0:
		bad = append(bad, "redis-restart: --redis is missing: with --targets, give the fleet's five Redis nodes in --redis (the load generator drops their clients and the product's keys)")
	case p.Redis > 0 && p.Redis < e.Nodes:
		bad = append(bad, fmt.Sprintf("redis-restart: %d nodes to restart, but --redis names %d", e.Nodes, p.Redis))
	}
	return append(bad, needsRow(e, p, "redlock or fenced")...)
}

// Ready says how fl's nodes restart.
func (e *EmptyRestart) Ready(fl *fleet.Fleet) (string, error) {
	if fl.Restarts == nil || len(fl.RedisAddrs) < e.Nodes {
		return "", fmt.Errorf("%w: --redis-restart needs the embedded backends or --redis with the five node addresses", ErrNoControl)
	}
	return fl.Restarts.Describe(), nil
}

// Provision has the fleet's shops reach real Redis nodes through proxies
// of its own, which can drop their connections.
func (e *EmptyRestart) Provision(cfg *fleet.FleetConfig) { cfg.RedisRestart = true }

// Defaults are the product the restart needs (see the top of this file).
func (e *EmptyRestart) Defaults() []Default {
	return []Default{{"lock-ttl", RestartLockTTL.String()}, {"work", RestartWork.String()},
		{"stall-rate", "0"}, {"stock", fmt.Sprint(RestartStock)}}
}

// Breaks reports whether the restart breaks a row of st with a lock TTL
// of ttl: redlock, when a majority of the nodes restart sooner than a
// lease can run out. Fenced is not: its database refuses the second
// holder's older or equal fence.
func (e *EmptyRestart) Breaks(st strategy.Name, ttl time.Duration) bool {
	return st == strategy.Redlock && e.Nodes > fleet.RedisNodes/2 && e.Delay < ttl
}

// Restart records one --redis-restart: which nodes (0-based) were
// restarted empty, when, for how long, and what the load generator saw of
// the product lock meanwhile.
type Restart struct {
	Nodes []int
	// Restarted is false if no holder was seen taking the lock before the
	// attack ended, and nothing was restarted.
	Restarted bool
	// At is when the nodes went down, since the attack began: as soon as
	// a holder was seen taking the lock. Back is when they served again.
	At, Back time.Duration
	// Delay is how long they were asked to stay down (--restart-delay).
	Delay time.Duration
	// GrantedWhileHeld counts the other tokens seen on a majority of the
	// nodes while the caught holder's token was still on a node that was
	// not restarted: locks granted to a second holder while the first
	// held. -1 where that cannot be seen (every watched node restarted:
	// fenced's one node, or all five).
	GrantedWhileHeld int
	// Err says why the nodes could not be restarted or brought back ("" if
	// all went well).
	Err string
}

// restarting is a restart armed in one attack.
type restarting struct{ out chan *Restart }

// Arm starts watching a's product lock.
func (e *EmptyRestart) Arm(ctx context.Context, a *Attack) (Armed, error) {
	r := &restarting{out: make(chan *Restart, 1)}
	began := time.Now()
	go func() { r.out <- e.restartOnce(ctx, a, began) }()
	return r, nil
}

// Stop waits until the restarted nodes serve again, or, if no holder was
// seen before a.Stopped closed, until the watch gave up, and returns what
// it saw. A node that could not be restarted is in the record, not an
// error.
func (r *restarting) Stop(context.Context, vegeta.Results) (Record, error) { return <-r.out, nil }

// restartOnce waits for a holder, restarts the nodes under it, and counts
// the holders granted meanwhile.
func (e *EmptyRestart) restartOnce(ctx context.Context, a *Attack, began time.Time) *Restart {
	stopped := a.Stopped
	rec := &Restart{Delay: e.Delay, GrantedWhileHeld: -1}
	for i := range e.Nodes {
		rec.Nodes = append(rec.Nodes, i)
	}
	w := newLockWatch(a.Fleet.RedisAddrs, a.Strategy, order.ProductKey(a.Product))
	defer w.close()
	holder, ok := w.awaitGrant(ctx, stopped)
	if !ok {
		return rec
	}
	rec.Restarted, rec.At = true, time.Since(began)
	done := make(chan error, 1)
	go func() {
		// Its own deadline, not the run's: the nodes come back even
		// after Ctrl-C.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.Delay+30*time.Second)
		defer cancel()
		done <- a.Fleet.Restarts.Restart(rctx, rec.Nodes, e.Delay, a.Product)
	}()
	rec.GrantedWhileHeld = w.grantedWhileHeld(ctx, holder, rec.Nodes, stopped)
	if err := <-done; err != nil {
		rec.Err = err.Error()
	}
	rec.Back = time.Since(began)
	return rec
}

// Why describes a --redis-restart with what the run saw: when the nodes
// went down, how long they stayed down, and, for redlock, how many other
// tokens took a majority while the caught holder's token was still on the
// nodes that were not restarted (GrantedWhileHeld).
func (r *Restart) Why(s Sale) string {
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
	if s.Strategy == strategy.Fenced {
		b.WriteString(" (node 1 held the fenced lock and its fence counter)")
	}
	switch n := r.GrantedWhileHeld; {
	case s.Strategy != strategy.Redlock:
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
