// Package dlock owns the distributed locks that guard a flash sale's stock.
//
// Five modes implement one interface, Locker, and each is a lesson:
//
//   - off: no lock; concurrent buyers oversell.
//   - naive: SETNX, then EXPIRE, with a constant value and a plain DEL. When
//     the work outlasts the TTL a second buyer gets in and the first one's
//     DEL frees the lock for a third; a crash between the two commands
//     leaves a key that never expires.
//   - lua: SET key token NX PX ttl with a fresh UUID token, released by a Lua
//     compare-and-delete, and renewed every ttl/3 by a watchdog that cancels
//     the handle's Context if the lock is lost.
//   - redlock: the lua lock on N independent masters, held only with a
//     majority and within a validity less the acquire time and clock drift.
//   - fenced: the lua lock whose every grant also mints a growing fencing
//     token (Lock.Fence), so a store can refuse a holder that lost the lock.
//
// Packages etcdlock and zklock hand out the same handles (NewHandle). Each
// acquisition returns its own *Lock; a Locker is safe for concurrent use.
// Waiting for a held lock is package waitroom's (wait.go). The Redis
// clients stay the caller's: build them with ContextTimeoutEnabled, and
// close them after the lockers.
package dlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors returned by lockers and handles, wrapped with the key (and nodes,
// or ctx.Err()); compare them with errors.Is.
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
	// holder (redlock alone retries a split vote). It returns ErrNotObtained
	// if someone else holds key, ErrUnavailable if Redis cannot be reached,
	// and an error wrapping ctx.Err() if ctx ended.
	TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error)

	// Lock takes key for ttl, waiting at most wait for a holder and never
	// past ctx's deadline. It returns ErrTimeout when the wait runs out
	// (wrapping ctx.Err() when ctx ended it) and ErrUnavailable as soon as
	// Redis cannot be reached. With wait <= 0 it makes one attempt and
	// reports a held lock as ErrTimeout.
	Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error)

	// Close stops the locker's pub/sub connections and waits for them.
	// Handles keep working, and so does Lock, whose waiters then wake only
	// when the holder's TTL would run out. The Redis clients stay the
	// caller's. Calling it again does nothing.
	Close() error
}

// Mode names a lock's algorithm; several strategies (package strategy) may
// share one. The zero value is not a valid mode.
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
// use nodes[0] (NewSingle), redlock all of them. An unknown mode wraps
// ErrUnknownMode. The clients stay the caller's, closed after Close.
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

// NewSingle returns the Locker for off, naive, lua or fenced on c: a node, a
// Sentinel-managed master or a Redis Cluster. On a cluster, give every lock
// key a hash tag ("lock:{product}"): lua and fenced keep "<key>:turns" and
// "<key>:fence" beside it, and a script's keys must share a slot
// (CROSSSLOT). Redlock is refused (New, NewRedlock); an unknown mode wraps
// ErrUnknownMode. c stays the caller's, closed after the locker's Close.
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
