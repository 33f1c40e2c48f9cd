// Package dlock owns the distributed locks that guard a flash sale's stock.
//
// Five modes implement one interface, Locker, and each is a lesson:
//
//   - off: no lock at all. Concurrent buyers read the same stock and both
//     write it back: oversell and duplicate orders.
//   - naive: SETNX, then EXPIRE, as two commands, with a constant value and a
//     fixed TTL that is never renewed; release is a plain DEL. It fails the
//     textbook ways: when the work outlasts the TTL the key expires, a second
//     buyer gets in, and the first buyer's DEL then removes the second buyer's
//     lock, letting a third in; and a process that dies between SETNX and
//     EXPIRE leaves a key that never expires and blocks everyone.
//   - lua: SET key token NX PX ttl with a fresh UUID token, released by a Lua
//     compare-and-delete so that only the owner can release it, and kept
//     alive by a watchdog that renews it with a Lua compare-and-PEXPIRE every
//     ttl/3. If a renewal finds the lock gone, the context handed to the work
//     is cancelled so the work can stop instead of writing unprotected.
//   - redlock: the lua lock on N independent masters at once, counting only
//     with a majority, inside a validity that subtracts the time spent
//     acquiring and an allowance for clock drift. It survives a minority of
//     nodes being down; with a majority down it fails cleanly.
//   - fenced: the lua lock, whose every grant also mints a fencing token, a
//     number that grows with each grant of the key (Lock.Fence). A store
//     that refuses writes carrying an older fence than it has seen keeps out
//     the one writer no lock can stop: a holder that lost the lock and has
//     not noticed yet.
//
// Locks kept by consensus systems live in packages of their own and hand
// out the same handles (NewHandle): package etcdlock on etcd, package
// zklock on ZooKeeper. Their fences come with an epoch (Lock.Epoch) for a
// cluster that is rebuilt.
//
// Every acquisition returns its own *Lock handle, which carries the token and
// knows how to refresh and release itself; a Locker keeps no per-acquisition
// state and is safe for concurrent use by any number of goroutines.
//
// Waiting for a held lock (Lock, as opposed to TryLock) is package
// waitroom's: the goroutines of one process queue per key and only the
// first asks Redis; every release is announced on the key's pub/sub
// channel, which wakes the waiters at once; without an announcement a
// waiter sleeps until the holder's key would expire; and between processes
// one fairness rule holds. A mode gives it one attempt at a time (wait.go).
//
// The Redis clients stay the caller's: build them with ContextTimeoutEnabled
// so that context deadlines also cut a hung call short, and close them after
// the lockers.
package dlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors returned by lockers and handles. Compare them with errors.Is: the
// returned errors wrap them with the key, the nodes and, where a context
// ended the wait, ctx.Err().
var (
	// ErrNotObtained means someone else holds the lock (TryLock; for
	// redlock, enough nodes answered but too few granted it).
	ErrNotObtained = errors.New("dlock: not obtained")
	// ErrTimeout means Lock waited as long as it was allowed to, or its
	// context ended first (then the error also wraps ctx.Err()).
	ErrTimeout = errors.New("dlock: timed out waiting for lock")
	// ErrNotHeld means a Refresh or Release found the lock expired or taken
	// over by someone else.
	ErrNotHeld = errors.New("dlock: lock not held")
	// ErrUnavailable means Redis (for redlock, a majority of the nodes; for
	// etcd, a quorum of the cluster) could not be reached.
	ErrUnavailable = errors.New("dlock: lock service unavailable")
	// ErrUnknownMode is returned by ParseMode for a name it does not know.
	ErrUnknownMode = errors.New("dlock: unknown lock mode")
)

// Locker acquires locks on keys. Implementations are safe for concurrent use.
// Every mode but off rejects a ttl under a millisecond with an error.
type Locker interface {
	// TryLock makes one attempt to take key for ttl and never waits for a
	// holder (redlock alone retries an inconclusive split vote after a few
	// random milliseconds, as the algorithm prescribes: a split vote means
	// nobody holds the lock). It
	// returns ErrNotObtained if someone else holds key, ErrUnavailable if
	// Redis cannot be reached, and an error wrapping ctx.Err() if ctx ended.
	TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error)

	// Lock takes key for ttl, waiting at most wait for a holder to let go
	// and never past ctx's deadline. It returns ErrTimeout when the wait
	// runs out (wrapping ctx.Err() when ctx ended it) and ErrUnavailable
	// as soon as Redis cannot be reached, without waiting out the wait:
	// when Redis goes down, the dropped release-announcement connection
	// wakes every waiter of this locker to try again, so every wait on
	// it ends with ErrUnavailable at once, one try each.
	// With wait <= 0 it makes one attempt, like TryLock, but reports a
	// held lock as ErrTimeout.
	Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error)

	// Close stops the locker's background work (its pub/sub connections)
	// and waits for it to end. Handles already returned keep working, and
	// so does Lock, though its waiters then only wake when the holder's TTL
	// would run out. Close does not close the Redis clients, which stay the
	// caller's. Calling it again does nothing.
	Close() error
}

// Mode names a lock's algorithm, not a strategy (package strategy): a
// strategy takes its lock in one mode, and several may share one (fenced,
// batched or not). The zero value is not a valid mode.
type Mode string

// The lock modes, from no protection to Redlock, then the lua lock with
// fencing tokens.
const (
	ModeOff     Mode = "off"
	ModeNaive   Mode = "naive"
	ModeLua     Mode = "lua"
	ModeRedlock Mode = "redlock"
	ModeFenced  Mode = "fenced"
)

// Modes lists every mode in the order the demo runs them.
func Modes() []Mode { return []Mode{ModeOff, ModeNaive, ModeLua, ModeRedlock, ModeFenced} }

// ParseMode returns the Mode named s, or an error wrapping ErrUnknownMode.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("%w %q (want off, naive, lua, redlock or fenced)", ErrUnknownMode, s)
}

// New returns the Locker for mode: off needs no nodes, naive, lua and fenced
// use nodes[0] (NewSingle), redlock uses all of them. It returns an error
// wrapping ErrUnknownMode for a mode it does not know, and an error if the
// mode needs nodes and has none. The clients stay the caller's to close,
// after the locker's Close.
func New(mode Mode, nodes []*redis.Client) (Locker, error) {
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	if mode == ModeOff {
		return NewOff(), nil
	}
	if len(nodes) == 0 || slices.Contains(nodes, nil) {
		return nil, fmt.Errorf("dlock: mode %s needs at least one Redis client, and no nil ones", mode)
	}
	if mode == ModeRedlock {
		return NewRedlock(nodes), nil
	}
	return NewSingle(mode, nodes[0])
}

// NewSingle returns the Locker for a mode that locks on one Redis: off,
// naive, lua or fenced, on c. That Redis may be a node, a master that
// Sentinels manage (go-redis's failover client) or a Redis Cluster
// (go-redis's cluster client). On a cluster, give every lock key a hash
// tag ("lock:{product}"): lua and fenced keep the key's turns and fence
// counter in keys named after it ("<key>:turns", "<key>:fence"), and a
// script's keys must share one slot, or the cluster refuses it
// (CROSSSLOT). Redlock is refused: it needs independent masters (New,
// NewRedlock). It returns an error wrapping ErrUnknownMode for a mode it
// does not know. c stays the caller's to close, after the locker's Close.
func NewSingle(mode Mode, c redis.UniversalClient) (Locker, error) {
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	switch {
	case mode == ModeOff:
		return NewOff(), nil
	case mode == ModeRedlock:
		return nil, fmt.Errorf("dlock: redlock locks on independent masters, not one Redis: use New or NewRedlock")
	case c == nil:
		return nil, fmt.Errorf("dlock: mode %s needs a Redis client", mode)
	case mode == ModeNaive:
		return NewNaive(c), nil
	case mode == ModeLua:
		return NewLua(c), nil
	default:
		return NewFenced(c), nil
	}
}
