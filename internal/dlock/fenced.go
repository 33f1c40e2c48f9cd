package dlock

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis/go-redis/v9"
)

// The script a fenced locker acquires with, run by SHA like the others. The
// file says what its KEYS and ARGV are.
var (
	//go:embed scripts/fenced_acquire.lua
	fencedAcquireLua    string
	fencedAcquireScript = redis.NewScript(fencedAcquireLua)
)

// NewFenced returns a fenced locker on c: the lua lock, which waits,
// renews, refreshes and releases exactly as NewLua's does, but whose every
// grant also mints a fencing token (see Lock.Fence) from a counter kept in
// Redis beside the lock key, under the key followed by ":fence". That
// counter never expires, and no other lock key may be named like it. c must
// not be nil and stays the caller's to close.
func NewFenced(c *redis.Client) *Lua { return newLua(c, obtainFenced) }

// obtainFenced is fenced's acquire: SET NX and, if it was granted, INCR of
// the fence counter, in one script (scripts/fenced_acquire.lua).
func obtainFenced(ctx context.Context, c *redis.Client, key, token string, ttl time.Duration) (bool, int64, error) {
	fence, err := fencedAcquireScript.Run(ctx, c, []string{key, key + ":fence"}, token, ttl.Milliseconds()).Int64()
	return fence > 0, fence, err
}

// Fence returns the fencing token minted with this grant: for the fenced
// mode, a number greater than that of every earlier grant of the same key
// on the same Redis node; 0 for every other mode. It is safe for
// concurrent use.
//
// It is for the store the protected work writes to. Send the fence with
// every write, and have the store keep the highest fence it has seen and
// refuse work that carries an older one. A holder that lost the lock
// without noticing in time (paused past its TTL, its renewals lost) then
// cannot commit over the work of the holder after it, which no lock can
// prevent by itself.
//
// The counter lives in Redis, so it is only as durable as that Redis: one
// that loses its data (restarted without persistence, or failed over to a
// replica that had not caught up) starts counting again, and a store that
// checks fences then refuses every holder until the count passes the
// highest fence it has seen. That is safe, but it stalls the work.
func (l *Lock) Fence() int64 { return l.fence }
