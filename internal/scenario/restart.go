package scenario

import (
	"time"

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
// them (restart_watch.go): in the first milliseconds of that holder's
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

// ForRestart returns s with the product a --redis-restart run needs
// (RestartLockTTL, RestartWork, no stalls, RestartStock), keeping every
// setting for which given reports true; given is called with the flag's
// name: "lock-ttl", "work", "stall-rate", "stock".
func (s Settings) ForRestart(given func(flag string) bool) Settings {
	if !given("lock-ttl") {
		s.LockTTL = RestartLockTTL
	}
	if !given("work") {
		s.Work = RestartWork
	}
	if !given("stall-rate") {
		s.StallRate = 0
	}
	if !given("stock") {
		s.Stock = RestartStock
	}
	return s
}

// restarts reports whether --redis-restart acts in m's attack: redlock's
// and fenced's, batched or not. (Fenced's lock and fence counter live on
// node 1 alone, which is restarted first.)
func (s Settings) restarts(m Mode) bool {
	st := m.Strategy()
	return s.RedisRestart > 0 && (st == strategy.Redlock || st == strategy.Fenced)
}

// restartBreaks reports whether the run's restart is expected to break m:
// redlock, when a majority of the nodes restart sooner than a lease can
// run out. Fenced is not: its database refuses the second holder's older
// or equal fence.
func (s Settings) restartBreaks(m Mode) bool {
	return m.Strategy() == strategy.Redlock && s.RedisRestart > fleet.RedisNodes/2 && s.RestartDelay < s.LockTTL
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

// lockKey is the shop's product lock key.
func lockKey(product string) string { return order.ProductKey(product) }
