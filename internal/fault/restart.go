package fault

import (
	"context"
	"fmt"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/fleet"
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
// (ForRestart puts them in, unless told otherwise).

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

// RestartActsOn reports whether --redis-restart acts in an attack of
// strategy st: redlock's and fenced's, batched or not. (Fenced's lock and
// fence counter live on node 1 alone, which is restarted first.)
func RestartActsOn(st strategy.Name) bool {
	return st == strategy.Redlock || st == strategy.Fenced
}

// EmptyRestart is --redis-restart: it restarts the first Nodes Redis nodes
// empty once in an attack it acts on (RestartActsOn), as soon as a holder
// is seen taking the product lock, and keeps them down for Delay.
type EmptyRestart struct {
	Nodes int
	Delay time.Duration

	out chan *Restart
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
	// Delay is how long they were asked to stay down (RestartDelay).
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

// Arm starts watching a's product lock, if the restart acts in a.
func (e *EmptyRestart) Arm(ctx context.Context, a *Attack) error {
	e.out = make(chan *Restart, 1)
	if e.Nodes == 0 || !RestartActsOn(a.Strategy) || a.Fleet.Restarts == nil || len(a.Fleet.RedisAddrs) == 0 {
		e.out <- nil
		return nil
	}
	began := time.Now()
	go func() { e.out <- e.restartOnce(ctx, a, began) }()
	return nil
}

// Stop waits until the restarted nodes serve again, or, if no holder was
// seen before a.Stopped closed, until the watch gave up, and records what
// it saw. A node that could not be restarted is in the record, not an
// error.
func (e *EmptyRestart) Stop(_ context.Context, _ vegeta.Results, into *Records) error {
	into.Restart = <-e.out
	return nil
}

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
