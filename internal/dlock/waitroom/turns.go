package waitroom

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Turns: waiters that ask for them (Asker.InTurn) take a lua or fenced key
// in turns with the other processes' that do. Each such room that is
// refused joins the key's turns, in the order it first asked; every
// release while a room waits in them, quiet or not (fair.go), hands the
// key to the room that has waited longest, which alone may take it for its
// hand-off window: handOff plus twice the room's round trip to Redis (the
// announcement has to reach it, and its acquire come back). A turn its
// room does not take in time (the process died, or its waiter gave up)
// lapses, and the key is anybody's again; a room that was only late keeps
// its place in line, for it brings that back when it asks. Once a key has
// turns, its other waiters join them too when refused, or they would never
// be handed it; a one-off try never joins, but respects a turn handed out.
// The turns are kept under the lock key followed by ":turns" and ":next",
// and outlive the last refusal by turnsLinger. scripts/acquire.lua and
// scripts/release.lua do all of it around the lock's own scripts, in the
// same round trips as the acquire and the release.
const (
	handOff     = 20 * time.Millisecond
	maxHandOff  = 999 * time.Millisecond // a window is kept in a score's last three digits
	turnsLinger = 10 * time.Second
)

// windowed opens a room's name in the turns, telling release.lua that its
// score keeps its window. During a rolling deploy an older binary's rooms,
// bare UUIDs, are scored by the microsecond they asked at: digits that are
// no window.
const windowed = "w:"

var (
	//go:embed scripts/acquire.lua
	acquireInTurnsLua string
	//go:embed scripts/release.lua
	releaseInTurnsLua string
)

// Turns runs a lock's acquire and release scripts with the key's turns
// around them, in one script each. It is safe for concurrent use.
type Turns struct {
	acquire, release *redis.Script
}

// NewTurns returns the Turns of a lock whose scripts are acquire and
// release (their source). acquire may take any KEYS and ARGV, the lock key
// first, and returns 0 for a refusal; release takes KEYS {key} and ARGV
// {token, channel}, announces nothing for an empty channel, and returns 1
// if it deleted the key, 0 if the key held another token.
func NewTurns(acquire, release string) *Turns {
	return &Turns{
		acquire: redis.NewScript("local function lock(KEYS, ARGV)\n" + acquire + "\nend\n" + acquireInTurnsLua),
		release: redis.NewScript("local function release(KEYS, ARGV)\n" + release + "\nend\n" + releaseInTurnsLua),
	}
}

// Hashes returns the SHA1s of the two scripts, the names EVALSHA calls
// them by, so that a fault can be aimed at them.
func (t *Turns) Hashes() (acquire, release string) { return t.acquire.Hash(), t.release.Hash() }

func turnsKey(key string) string { return key + ":turns" }
func nextKey(key string) string  { return key + ":next" }

// Acquire runs the lock's acquire with keys and args (keys[0] the lock
// key), for room r as by asks: what it returned if it took the lock (0 if
// not), and how long a turn handed to another room has left, if that is
// why it did not.
func (t *Turns) Acquire(ctx context.Context, c redis.Scripter, r *Room, keys []string, args []any, by Asker) (got int64, turnLeft time.Duration, err error) {
	waits := "0" // a one-off try
	switch {
	case by.Head && by.InTurn:
		waits = "2"
	case by.Head:
		waits = "1"
	}
	place, window := r.inLine(keys[0])
	start := time.Now()
	res, err := t.acquire.Run(ctx, c, append([]string{turnsKey(keys[0]), nextKey(keys[0])}, keys...),
		append([]any{r.id, waits, turnsLinger.Milliseconds(), place, window.Milliseconds()}, args...)...).Int64Slice()
	switch {
	case err != nil:
		return 0, 0, err
	case len(res) == 2 && res[0] == 1:
		r.answered(keys[0], by.Head, time.Since(start), 0) // a grant uses its place up
		return res[1], 0, nil
	case len(res) != 3:
		return 0, 0, fmt.Errorf("waitroom: acquire answered %v", res)
	}
	r.answered(keys[0], by.Head, time.Since(start), res[2])
	return 0, time.Duration(res[1]) * time.Millisecond, nil
}

// inLine returns what this room brings to key's turns when it asks: its
// place in line (0 if it has none), and its hand-off window.
func (r *Room) inLine(key string) (place int64, window time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ks := r.keys[key]; ks != nil {
		place = ks.place
	}
	return place, min(handOff+2*r.rtt, maxHandOff)
}

// answered records an acquire's answer: the round trip it took, smoothed
// as TCP smooths its own; and for a head, its room's place in key's turns.
func (r *Room) answered(key string, head bool, took time.Duration, place int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rtt == 0 {
		r.rtt = took
	} else {
		// One outlier (a pause, a retransmission) counts as at most four
		// times the estimate, or it would widen the window for dozens of turns.
		r.rtt += (min(took, 4*r.rtt) - r.rtt) / 8
	}
	if ks := r.keys[key]; ks != nil && head {
		ks.place = place
	}
}

// Release runs the lock's release for token, handing the key to the next
// room in its turns if one waits there: 0 if token no longer held key, 1 if
// it was released, HandedOn if it was also handed on (and announced, even
// if it was to be quiet).
func (t *Turns) Release(ctx context.Context, c redis.Scripter, key, token string, quiet bool) (int64, error) {
	q := "0"
	if quiet {
		q = "1"
	}
	return t.release.Run(ctx, c, []string{turnsKey(key), nextKey(key), key},
		token, Channel(key), q, handOff.Milliseconds()).Int64()
}

// HandedOn is Release's answer for a release that handed the key to
// another room's turn.
const HandedOn = 2
