package dlock

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// The scripts lua, fenced and redlock run to refresh and release, by SHA (EVALSHA,
// falling back to EVAL the first time a server sees them). Each file says
// what its KEYS and ARGV are.
var (
	//go:embed scripts/refresh.lua
	refreshLua    string
	refreshScript = redis.NewScript(refreshLua)

	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = redis.NewScript(releaseLua)

	//go:embed scripts/acquire.lua
	acquireLua    string
	acquireScript = redis.NewScript(acquireLua)
)

// Lua is the safe single-node lock: SET key token NX PX ttl with a fresh
// UUID token per acquisition, so that only the holder can release it (a Lua
// compare-and-delete) or extend it (a Lua compare-and-PEXPIRE). Each handle
// runs a watchdog that renews the lock every ttl/3, so work slower than the
// TTL stays protected, and cancels the handle's context if the lock is lost.
// Its Lock and Close are the waiting every mode shares (wait.go), and its
// waiters may take a key in turns (InTurns, turns.go). NewFenced returns a
// Lua whose grants also mint fencing tokens. Lua is safe for concurrent
// use.
type Lua struct {
	*waiting
	client redis.UniversalClient
	fenced bool // its grants mint fencing tokens
}

// NewLua returns a lua locker on c, which must not be nil and stays the
// caller's to close. Build c with ContextTimeoutEnabled so that context
// deadlines also cut a hung Redis call short. No other lock key may be
// named like a key followed by ":turns" or ":next" (see InTurns).
func NewLua(c redis.UniversalClient) *Lua { return newLua(c, false) }

func newLua(c redis.UniversalClient, fenced bool) *Lua {
	m := &Lua{client: c, fenced: fenced}
	m.waiting = newWaiting([]redis.UniversalClient{c}, 1, m.try)
	return m
}

// TryLock makes one attempt. It returns ErrNotObtained if someone else holds
// key and ErrUnavailable if Redis cannot be reached. The handle's watchdog
// runs until Release or until ctx ends.
func (m *Lua) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	l, _, err := m.try(ctx, key, ttl, asker{})
	return l, err
}

// try is one acquire, as TryLock describes, made as by says (the seam of
// wait.go). When the key is held, a waiter tries again when a lock taken
// with this TTL would have expired, if no release is announced first
// (asking the holder's would cost a round trip on every refusal); when a
// turn was handed to another room, when that turn lapses (nothing
// announces a lapse).
func (m *Lua) try(ctx context.Context, key string, ttl time.Duration, by asker) (*Lock, retry, error) {
	if err := CheckTTL(ttl); err != nil {
		return nil, retry{}, err
	}
	token := uuid.NewString()
	start := time.Now()
	granted, fence, turnLeft, err := m.obtain(ctx, key, token, ttl, by)
	if err != nil {
		if ctx.Err() != nil { // the SET may have landed all the same
			m.undo(ctx, key, token, ttl)
		}
		return nil, retry{}, redisErr(ctx, err, "acquire", key)
	}
	refused := retry{held: true, after: untilExpiry(ttl)}
	if !granted {
		if turnLeft > 0 {
			refused.after = turnLeft
		}
		return nil, refused, fmt.Errorf("%w: %q", ErrNotObtained, key)
	}
	// Valid for the TTL counted from before the SET was sent: not at all if
	// the SET took that long. Then the key, if it is still there, is no use
	// to anyone: undo it.
	if took := time.Since(start); took >= ttl {
		m.undo(ctx, key, token, ttl)
		return nil, refused, fmt.Errorf("%w: %q: the acquire took %v, as long as the %v TTL", ErrNotObtained, key, took, ttl)
	}
	l := newLock(ctx, key, token, ttl, start.Add(ttl), m, true)
	l.fence = fence // set before anyone but this goroutine has l
	return l, retry{}, nil
}

// undo deletes key if it holds token, an acquire that is of no use, and
// announces that: other processes' waiters may have found it held.
func (m *Lua) undo(ctx context.Context, key, token string, ttl time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
	defer cancel()
	_, _ = m.releaseInTurns(ctx, key, token, false)
}

func (m *Lua) refresh(ctx context.Context, l *Lock, ttl time.Duration) (time.Duration, error) {
	ok, err := refreshOn(ctx, m.client, l.key, l.token, ttl)
	if err != nil {
		return 0, redisErr(ctx, err, "refresh", l.key)
	}
	if !ok {
		return 0, notHeld(l.key, "expired or was taken over")
	}
	return ttl, nil
}

// release deletes the key if it still holds this handle's token, and
// announces the release to the waiters unless quiet, in one script (which
// announces a release that hands the key on in turns all the same).
func (m *Lua) release(ctx context.Context, l *Lock, quiet bool) (announced bool, _ error) {
	n, err := m.releaseInTurns(ctx, l.key, l.token, quiet)
	switch {
	case err != nil:
		return false, redisErr(ctx, err, "release", l.key)
	case n == 0:
		return false, notHeld(l.key, "expired or was taken over")
	}
	return !quiet || n == releasedHandedOn, nil
}

// refreshOn runs refresh.lua on c: whether token still held key.
func refreshOn(ctx context.Context, c redis.UniversalClient, key, token string, ttl time.Duration) (bool, error) {
	n, err := refreshScript.Run(ctx, c, []string{key}, token, ttl.Milliseconds()).Int64()
	return n == 1, err
}
