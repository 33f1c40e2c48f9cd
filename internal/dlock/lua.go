package dlock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// The scripts lua and redlock run to refresh and release, by SHA (EVALSHA,
// falling back to EVAL the first time a server sees them). Each file says
// what its KEYS and ARGV are.
var (
	//go:embed scripts/refresh.lua
	refreshLua    string
	refreshScript = redis.NewScript(refreshLua)

	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = redis.NewScript(releaseLua)
)

// Lua is the safe single-node lock: SET key token NX PX ttl with a fresh
// UUID token per acquisition, so that only the holder can release it (a Lua
// compare-and-delete) or extend it (a Lua compare-and-PEXPIRE). Each handle
// runs a watchdog that renews the lock every ttl/3, so work slower than the
// TTL stays protected, and cancels the handle's context if the lock is lost.
// Lua is safe for concurrent use.
type Lua struct {
	client *redis.Client
	room   *room
}

// NewLua returns a lua locker on c, which must not be nil and stays the
// caller's to close. Build c with ContextTimeoutEnabled so that context
// deadlines also cut a hung Redis call short.
func NewLua(c *redis.Client) *Lua {
	return &Lua{client: c, room: newRoom([]*redis.Client{c})}
}

// TryLock makes one attempt. It returns ErrNotObtained if someone else holds
// key and ErrUnavailable if Redis cannot be reached. The handle's watchdog
// runs until Release or until ctx ends.
func (m *Lua) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	l, _, err := m.obtain(ctx, key, ttl)
	return l, err
}

// Lock waits for the key as described on Locker: waiters queue per key in
// this process, wake when a release is announced, and otherwise sleep until
// the holder's TTL would run out.
func (m *Lua) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	return m.room.lock(ctx, key, wait, func(ctx context.Context) (*Lock, time.Duration, error) {
		return m.obtain(ctx, key, ttl)
	})
}

// Close stops listening for releases, as described on Locker. It always
// returns nil.
func (m *Lua) Close() error {
	m.room.close()
	return nil
}

// obtain tries once; if the key is held it also says how long to sleep.
func (m *Lua) obtain(ctx context.Context, key string, ttl time.Duration) (*Lock, time.Duration, error) {
	if err := checkTTL(ttl); err != nil {
		return nil, 0, err
	}
	token := uuid.NewString()
	start := time.Now()
	granted, pttl, _, err := obtainOn(ctx, m.client, key, token, ttl, false)
	if err != nil {
		return nil, 0, redisErr(ctx, err, "acquire", key)
	}
	if !granted {
		return nil, untilExpiry(pttl), fmt.Errorf("%w: %q", ErrNotObtained, key)
	}
	// Valid for the TTL counted from before the SET was sent: not at all if
	// the SET took that long. Then the key, if it is still there, is no use
	// to anyone: undo it, quietly (nobody can be waiting for a release).
	if took := time.Since(start); took >= ttl {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
		_, _ = releaseOn(uctx, m.client, key, token, "")
		cancel()
		return nil, 0, fmt.Errorf("%w: %q: the acquire took %v, as long as the %v TTL", ErrNotObtained, key, took, ttl)
	}
	return newLock(ctx, key, token, ttl, start.Add(ttl), m, true), 0, nil
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

func (m *Lua) release(ctx context.Context, l *Lock) error {
	forget := m.room.expectRelease(l.key, l.token)
	ok, err := releaseOn(ctx, m.client, l.key, l.token, releaseChannel(l.key))
	if err != nil || !ok {
		forget()
	}
	if err != nil {
		return redisErr(ctx, err, "release", l.key)
	}
	if !ok {
		return notHeld(l.key, "expired or was taken over")
	}
	return nil
}

// obtainOn makes one acquire on c: SET key token NX PX ttl, and in the same
// round trip GET key and PTTL key, so that if someone else holds the key the
// caller also learns whose token holds it (Redlock tells a held lock from a
// split vote by it) and how long a waiter may have to wait. (A pipeline of
// plain commands rather than a script: as fast on Redis, and far cheaper on
// miniredis, whose Lua is slow.) They are not atomic: if the holder's key
// vanished in between, holder is "" and pttl is 0, which tells the waiter to
// try again soon. Only Redlock needs the holder: withHolder false leaves the
// GET out.
func obtainOn(ctx context.Context, c *redis.Client, key, token string, ttl time.Duration, withHolder bool) (granted bool, pttl time.Duration, holder string, err error) {
	pipe := c.Pipeline()
	set := pipe.Do(ctx, "SET", key, token, "NX", "PX", ttl.Milliseconds())
	var get *redis.StringCmd
	if withHolder {
		get = pipe.Get(ctx, key)
	}
	left := pipe.PTTL(ctx, key)
	_, _ = pipe.Exec(ctx) // the errors are the commands' own
	switch err := set.Err(); {
	case err == nil:
		return true, 0, "", nil
	case !errors.Is(err, redis.Nil): // redis.Nil is SET NX's "key exists"
		return false, 0, "", err
	}
	if get != nil {
		holder, err = get.Result()
		if err != nil && !errors.Is(err, redis.Nil) { // redis.Nil: gone meanwhile
			return false, 0, "", err
		}
	}
	if err := left.Err(); err != nil {
		return false, 0, "", err
	}
	// go-redis reports PTTL's -1 (no expiry) as -1ns and -2 (no key) as -2ns.
	switch d := left.Val(); {
	case d == -1:
		return false, -1, holder, nil
	case d < 0:
		return false, 0, holder, nil
	default:
		return false, d, holder, nil
	}
}

// refreshOn runs refresh.lua on c: whether token still held key.
func refreshOn(ctx context.Context, c *redis.Client, key, token string, ttl time.Duration) (bool, error) {
	n, err := refreshScript.Run(ctx, c, []string{key}, token, ttl.Milliseconds()).Int64()
	return n == 1, err
}

// releaseOn runs release.lua on c: whether token still held key. An empty
// channel releases without an announcement.
func releaseOn(ctx context.Context, c *redis.Client, key, token, channel string) (bool, error) {
	n, err := releaseScript.Run(ctx, c, []string{key}, token, channel).Int64()
	return n == 1, err
}
