package dlock

import (
	"context"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/dlock/announce"
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
// refusal by turnsLinger. scripts/acquire.lua and scripts/release.lua do
// all of it, in the same round trips as the acquire and the release.
const (
	handOff     = 20 * time.Millisecond
	turnsLinger = 10 * time.Second
)

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

// obtain runs scripts/acquire.lua for token, as by asks: whether it was
// granted, the fence it minted (fenced only), and how long a turn handed
// to another room has left, if that is why it was not.
func (m *Lua) obtain(ctx context.Context, key, token string, ttl time.Duration, by asker) (granted bool, fence int64, turnLeft time.Duration, err error) {
	keys := []string{key, turnsKey(key), nextKey(key)}
	if m.fenced {
		keys = append(keys, key+":fence")
	}
	waits := "0" // a one-off try
	switch {
	case by.head && by.inTurn:
		waits = "2"
	case by.head:
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

// releaseInTurns runs release.lua for token, handing the key to the next room
// in its turns if one waits there: 0 if token no longer held key, 1 if it
// was released, releasedHandedOn if it was also handed on (and announced,
// even if it was to be quiet).
func (m *Lua) releaseInTurns(ctx context.Context, key, token string, quiet bool) (int64, error) {
	channel := announce.Channel(key)
	if quiet {
		channel = ""
	}
	return releaseScript.Run(ctx, m.client, []string{key, turnsKey(key), nextKey(key)},
		token, channel, handOff.Milliseconds(), announce.Channel(key)).Int64()
}

// releasedHandedOn is release.lua's answer for a release that handed the
// key to another room's turn.
const releasedHandedOn = 2
