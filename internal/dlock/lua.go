package dlock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/dlock/waitroom"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// The lua lock's scripts, each listing its KEYS and ARGV. acquire and
// release run wrapped in the key's turns (waitroom.Turns), in one round trip.
var (
	//go:embed scripts/acquire.lua
	acquireLua string

	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = redis.NewScript(releaseLua) // redlock's, on each node

	//go:embed scripts/refresh.lua
	refreshLua    string
	refreshScript = redis.NewScript(refreshLua)

	turns = waitroom.NewTurns(acquireLua, releaseLua)
)

// Lua is the safe single-node lock: SET key token NX PX ttl with a fresh
// UUID token, released by a Lua compare-and-delete and extended by a Lua
// compare-and-PEXPIRE, so only the holder can do either. Each handle's
// watchdog renews it every ttl/3 and cancels the handle's context if the
// lock is lost. NewFenced's grants also mint fencing tokens. Lock and Close
// come from waiting (wait.go). Lua is safe for concurrent use.
type Lua struct {
	*waiting
	client redis.UniversalClient
	fenced bool // its grants mint fencing tokens
}

// NewLua returns a lua locker on c, which must not be nil and stays the
// caller's to close (build it with ContextTimeoutEnabled). No other lock key
// may be named like a key followed by ":turns" or ":next" (see InTurns).
func NewLua(c redis.UniversalClient) *Lua { return newLua(c, false) }

func newLua(c redis.UniversalClient, fenced bool) *Lua {
	m := &Lua{client: c, fenced: fenced}
	m.waiting = newWaiting([]redis.UniversalClient{c}, 1, m.try)
	return m
}

// InTurns returns a Locker whose Lock takes l's keys first come, first
// served with other processes' waiters that do, instead of racing them at
// every release (waitroom's turns.go): for a waiter that comes back for the
// key at once, such as a batch's leader, which a race can starve. Every
// other method is l's, and closing either closes both. For a locker other
// than lua or fenced it returns l. Turns live under "<key>:turns" and
// "<key>:next".
func InTurns(l Locker) Locker {
	if m, ok := l.(*Lua); ok {
		return inTurns{m}
	}
	return l
}

type inTurns struct{ *Lua }

func (t inTurns) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	return t.lock(ctx, key, ttl, wait, true)
}

// TryLock makes one attempt. It returns ErrNotObtained if someone else holds
// key and ErrUnavailable if Redis cannot be reached. The handle's watchdog
// runs until Release or until ctx ends.
func (m *Lua) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	l, _, err := m.try(ctx, key, ttl, waitroom.Asker{})
	return l, err
}

// try is one acquire made as by says (wait.go). A refused waiter retries
// when a lock with this TTL would expire, or when another room's turn
// lapses, unless a release is announced first.
func (m *Lua) try(ctx context.Context, key string, ttl time.Duration, by waitroom.Asker) (*Lock, waitroom.Retry, error) {
	if err := CheckTTL(ttl); err != nil {
		return nil, waitroom.Retry{}, err
	}
	keys := []string{key}
	if m.fenced {
		keys = append(keys, key+":fence")
	}
	token := uuid.NewString()
	start := time.Now()
	got, turnLeft, err := turns.Acquire(ctx, m.client, m.room, keys, []any{token, ttl.Milliseconds()}, by)
	if err != nil {
		var reply redis.Error
		if !errors.As(err, &reply) { // no reply (lost, or ctx ended): the SET may have landed all the same
			m.undo(ctx, key, token, ttl)
		}
		return nil, waitroom.Retry{}, redisErr(ctx, err, "acquire", key)
	}
	refused := waitroom.Retry{Held: true, After: waitroom.UntilExpiry(ttl)}
	if got == 0 {
		if turnLeft > 0 {
			refused.After = turnLeft
		}
		return nil, refused, fmt.Errorf("%w: %q", ErrNotObtained, key)
	}
	// Valid for the TTL from before the SET: an acquire that took the whole
	// TTL is of no use, so undo it.
	if took := time.Since(start); took >= ttl {
		m.undo(ctx, key, token, ttl)
		return nil, refused, fmt.Errorf("%w: %q: the acquire took %v, as long as the %v TTL", ErrNotObtained, key, took, ttl)
	}
	l := newLock(ctx, key, token, ttl, start.Add(ttl), m, true)
	if m.fenced {
		l.fence = got // acquire.lua's INCR of key:fence; set before anyone but this goroutine has l
	}
	return l, waitroom.Retry{}, nil
}

// undo deletes key if it holds token, and announces it (waiters may have
// seen it held). It waits at most nodeTimeout: the key expires anyway.
func (m *Lua) undo(ctx context.Context, key, token string, ttl time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nodeTimeout(ttl))
	defer cancel()
	_, _ = turns.Release(ctx, m.client, key, token, false)
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

// release deletes the key if it holds this handle's token and, unless
// quiet or handed on in turns, announces it, in one script.
func (m *Lua) release(ctx context.Context, l *Lock, quiet bool) (announced bool, _ error) {
	n, err := turns.Release(ctx, m.client, l.key, l.token, quiet)
	switch {
	case err != nil:
		return false, redisErr(ctx, err, "release", l.key)
	case n == 0:
		return false, notHeld(l.key, "expired or was taken over")
	}
	return !quiet || n == waitroom.HandedOn, nil
}

// refreshOn runs refresh.lua on c: whether token still held key.
func refreshOn(ctx context.Context, c redis.UniversalClient, key, token string, ttl time.Duration) (bool, error) {
	n, err := refreshScript.Run(ctx, c, []string{key}, token, ttl.Milliseconds()).Int64()
	return n == 1, err
}
