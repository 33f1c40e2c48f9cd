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
)

// Lua is the safe single-node lock: SET key token NX PX ttl with a fresh
// UUID token per acquisition, so that only the holder can release it (a Lua
// compare-and-delete) or extend it (a Lua compare-and-PEXPIRE). Each handle
// runs a watchdog that renews the lock every ttl/3, so work slower than the
// TTL stays protected, and cancels the handle's context if the lock is lost.
// Its Lock and Close are the waiting every mode shares (wait.go). NewFenced
// returns a Lua whose grants also mint fencing tokens. Lua is safe for
// concurrent use.
type Lua struct {
	*waiting
	client *redis.Client
	obtain obtainer // the acquire: plain SET NX (lua) or one that also mints a fence (fenced)
}

// obtainer makes one acquire of key for token on c and reports whether it
// was granted, with the fencing token it minted (0 if it mints none).
type obtainer func(ctx context.Context, c *redis.Client, key, token string, ttl time.Duration) (granted bool, fence int64, err error)

// NewLua returns a lua locker on c, which must not be nil and stays the
// caller's to close. Build c with ContextTimeoutEnabled so that context
// deadlines also cut a hung Redis call short.
func NewLua(c *redis.Client) *Lua { return newLua(c, obtainPlain) }

func newLua(c *redis.Client, obtain obtainer) *Lua {
	m := &Lua{client: c, obtain: obtain}
	m.waiting = newWaiting([]*redis.Client{c}, 1, m.TryLock, m.attempt)
	return m
}

// TryLock makes one attempt. It returns ErrNotObtained if someone else holds
// key and ErrUnavailable if Redis cannot be reached. The handle's watchdog
// runs until Release or until ctx ends.
func (m *Lua) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	token := uuid.NewString()
	start := time.Now()
	granted, fence, err := m.obtain(ctx, m.client, key, token, ttl)
	if err != nil {
		if ctx.Err() != nil { // the SET may have landed all the same
			m.undo(ctx, key, token, ttl)
		}
		return nil, redisErr(ctx, err, "acquire", key)
	}
	if !granted {
		return nil, fmt.Errorf("%w: %q", ErrNotObtained, key)
	}
	// Valid for the TTL counted from before the SET was sent: not at all if
	// the SET took that long. Then the key, if it is still there, is no use
	// to anyone: undo it.
	if took := time.Since(start); took >= ttl {
		m.undo(ctx, key, token, ttl)
		return nil, fmt.Errorf("%w: %q: the acquire took %v, as long as the %v TTL", ErrNotObtained, key, took, ttl)
	}
	l := newLock(ctx, key, token, ttl, start.Add(ttl), m, true)
	l.fence = fence // set before anyone but this goroutine has l
	return l, nil
}

// undo deletes key if it holds token, an acquire that is of no use, and
// announces that: other processes' waiters may have found it held.
func (m *Lua) undo(ctx context.Context, key, token string, ttl time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
	defer cancel()
	_, _ = releaseOn(ctx, m.client, key, token, releaseChannel(key))
}

// attempt is TryLock for a waiting Lock. Without an announcement, a
// waiter tries again when a lock taken with this TTL would have expired:
// asking the holder's would cost a round trip on every refusal.
func (m *Lua) attempt(ctx context.Context, key string, ttl time.Duration) (*Lock, retry, error) {
	l, err := m.TryLock(ctx, key, ttl)
	return l, retry{held: errors.Is(err, ErrNotObtained), after: untilExpiry(ttl)}, err
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
// announces the release to the waiters, in one script.
func (m *Lua) release(ctx context.Context, l *Lock) error {
	ok, err := releaseOn(ctx, m.client, l.key, l.token, m.room.announceOn(l))
	if err != nil {
		return redisErr(ctx, err, "release", l.key)
	}
	if !ok {
		return notHeld(l.key, "expired or was taken over")
	}
	return nil
}

// obtainOn makes one acquire on c: SET key token NX PX ttl. If the key is
// held and withHolder is set, a GET then says whose token holds it
// (Redlock tells a held lock from a split vote by it); holder is "" if the
// key vanished meanwhile. (Not SET ... NX GET, which would do both at once
// on Redis 7: its nil reply on success costs go-redis more than the GET
// costs on a refusal.)
func obtainOn(ctx context.Context, c *redis.Client, key, token string, ttl time.Duration, withHolder bool) (granted bool, holder string, err error) {
	err = c.Do(ctx, "SET", key, token, "NX", "PX", ttl.Milliseconds()).Err()
	switch {
	case err == nil:
		return true, "", nil
	case !errors.Is(err, redis.Nil): // redis.Nil is SET NX's "key exists"
		return false, "", err
	case !withHolder:
		return false, "", nil
	}
	holder, err = c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return false, "", nil
	}
	return false, holder, err
}

// obtainPlain is lua's acquire: obtainOn, minting no fence.
func obtainPlain(ctx context.Context, c *redis.Client, key, token string, ttl time.Duration) (bool, int64, error) {
	granted, _, err := obtainOn(ctx, c, key, token, ttl, false)
	return granted, 0, err
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
