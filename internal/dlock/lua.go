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

	//go:embed scripts/acquire.lua
	acquireLua    string
	acquireScript = redis.NewScript(acquireLua)
)

// Turns (InTurns): waiters that ask for them take a lua or fenced key in
// turns with the other processes' that do. Each such waiting process (its
// room: only its first waiter asks Redis) that is refused joins the key's
// turns, in the order it first asked; every release while a room waits in
// them, quiet or not (wait_fair.go), hands the key to the room that has
// waited longest, which alone may take it for handOff. A turn its room
// does not take in time (the process died, or its waiter gave up) lapses,
// and the key is anybody's again. Once a key has turns, its other waiters
// join them too when refused, or they would never be handed it; TryLock
// never joins, but respects a turn handed out. The turns are kept under
// the lock key followed by ":turns" and ":next", and outlive the last
// refusal by turnsLinger.
const (
	handOff     = 20 * time.Millisecond
	turnsLinger = 10 * time.Second
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
	m.waiting = newWaiting([]redis.UniversalClient{c}, 1, m.TryLock, m.attempt)
	return m
}

// TryLock makes one attempt. It returns ErrNotObtained if someone else holds
// key and ErrUnavailable if Redis cannot be reached. The handle's watchdog
// runs until Release or until ctx ends.
func (m *Lua) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	l, _, err := m.try(ctx, key, ttl, false, false)
	return l, err
}

// try is one acquire, as TryLock describes. A waiting room's head (wait)
// that is refused joins the key's turns if it waits in turns (inTurn), or
// if the key has turns already (scripts/acquire.lua says why). turnLeft is
// how long a turn handed to another room has left, when that is why it was
// refused.
func (m *Lua) try(ctx context.Context, key string, ttl time.Duration, wait, inTurn bool) (_ *Lock, turnLeft time.Duration, _ error) {
	if err := checkTTL(ttl); err != nil {
		return nil, 0, err
	}
	token := uuid.NewString()
	start := time.Now()
	granted, fence, turnLeft, err := m.obtain(ctx, key, token, ttl, wait, inTurn)
	if err != nil {
		if ctx.Err() != nil { // the SET may have landed all the same
			m.undo(ctx, key, token, ttl)
		}
		return nil, 0, redisErr(ctx, err, "acquire", key)
	}
	if !granted {
		return nil, turnLeft, fmt.Errorf("%w: %q", ErrNotObtained, key)
	}
	// Valid for the TTL counted from before the SET was sent: not at all if
	// the SET took that long. Then the key, if it is still there, is no use
	// to anyone: undo it.
	if took := time.Since(start); took >= ttl {
		m.undo(ctx, key, token, ttl)
		return nil, 0, fmt.Errorf("%w: %q: the acquire took %v, as long as the %v TTL", ErrNotObtained, key, took, ttl)
	}
	l := newLock(ctx, key, token, ttl, start.Add(ttl), m, true)
	l.fence = fence // set before anyone but this goroutine has l
	return l, 0, nil
}

// obtain runs scripts/acquire.lua for token: whether it was granted, the
// fence it minted (fenced only), and how long a turn handed to another
// room has left, if that is why it was not.
func (m *Lua) obtain(ctx context.Context, key, token string, ttl time.Duration, wait, inTurn bool) (granted bool, fence int64, turnLeft time.Duration, err error) {
	keys := []string{key, turnsKey(key), nextKey(key)}
	if m.fenced {
		keys = append(keys, key+":fence")
	}
	waits := "0" // a one-off try
	switch {
	case wait && inTurn:
		waits = "2"
	case wait:
		waits = "1"
	}
	res, err := acquireScript.Run(ctx, m.client, keys, token, ttl.Milliseconds(), m.room.id, waits, turnsLinger.Milliseconds()).Int64Slice()
	if err != nil {
		return false, 0, 0, err
	}
	if len(res) != 2 {
		return false, 0, 0, fmt.Errorf("dlock: acquire answered %v", res)
	}
	if res[0] == 1 {
		return true, res[1], 0, nil
	}
	return false, 0, time.Duration(res[1]) * time.Millisecond, nil
}

// releaseOn runs release.lua for token, handing the key to the next room
// in its turns if one waits there: 0 if token no longer held key, 1 if it
// was released, releasedHandedOn if it was also handed on (and announced,
// even on an empty channel).
func (m *Lua) releaseOn(ctx context.Context, key, token, channel string) (int64, error) {
	return releaseScript.Run(ctx, m.client, []string{key, turnsKey(key), nextKey(key)},
		token, channel, handOff.Milliseconds(), releaseChannel(key)).Int64()
}

// releasedHandedOn is release.lua's answer for a release that handed the
// key to another room's turn.
const releasedHandedOn = 2

// InTurns returns a Locker whose Lock takes l's keys in turns with the
// other processes' waiters that do, first come, first served, instead of
// racing them at every release (see the Turns comment above). It is for a
// process that has one waiter per key that comes back for the key at once,
// such as a batch's leader: in a race, with three such processes, one can
// lose a dozen times in a row. Its TryLock, and every method but Lock, are
// l's own, and closing either closes both. For a locker without turns (all
// but lua and fenced) it returns l.
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

func turnsKey(key string) string { return key + ":turns" }
func nextKey(key string) string  { return key + ":next" }

// undo deletes key if it holds token, an acquire that is of no use, and
// announces that: other processes' waiters may have found it held.
func (m *Lua) undo(ctx context.Context, key, token string, ttl time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
	defer cancel()
	_, _ = m.releaseOn(ctx, key, token, releaseChannel(key))
}

// attempt is TryLock for a waiting Lock. Without an announcement, a
// waiter tries again when a lock taken with this TTL would have expired:
// asking the holder's would cost a round trip on every refusal.
// A waiter refused because the turn was handed to another room tries
// again when that turn lapses (nothing announces a lapse).
func (m *Lua) attempt(ctx context.Context, key string, ttl time.Duration, inTurn bool) (*Lock, retry, error) {
	l, turnLeft, err := m.try(ctx, key, ttl, true, inTurn)
	after := untilExpiry(ttl)
	if turnLeft > 0 {
		after = turnLeft
	}
	return l, retry{held: errors.Is(err, ErrNotObtained), after: after}, err
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
	n, err := m.releaseOn(ctx, l.key, l.token, m.room.announceOn(l))
	if err != nil {
		return redisErr(ctx, err, "release", l.key)
	}
	if n == releasedHandedOn {
		m.room.handedOn(l)
	}
	if n == 0 {
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
func obtainOn(ctx context.Context, c redis.UniversalClient, key, token string, ttl time.Duration, withHolder bool) (granted bool, holder string, err error) {
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

// refreshOn runs refresh.lua on c: whether token still held key.
func refreshOn(ctx context.Context, c redis.UniversalClient, key, token string, ttl time.Duration) (bool, error) {
	n, err := refreshScript.Run(ctx, c, []string{key}, token, ttl.Milliseconds()).Int64()
	return n == 1, err
}

// releaseOn runs release.lua on c for Redlock's nodes, which keep no
// turns: whether token still held key. An empty channel releases without
// an announcement.
func releaseOn(ctx context.Context, c redis.UniversalClient, key, token, channel string) (bool, error) {
	n, err := releaseScript.Run(ctx, c, []string{key}, token, channel).Int64()
	return n == 1, err
}
