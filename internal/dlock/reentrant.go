package dlock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/dlock/announce"
	"github.com/redis/go-redis/v9"
)

// The scripts of the reentrant lock, run by SHA like lua's. Each file says
// what its KEYS and ARGV are.
var (
	//go:embed scripts/reentrant_acquire.lua
	reentrantAcquireLua    string
	reentrantAcquireScript = redis.NewScript(reentrantAcquireLua)

	//go:embed scripts/reentrant_refresh.lua
	reentrantRefreshLua    string
	reentrantRefreshScript = redis.NewScript(reentrantRefreshLua)

	//go:embed scripts/reentrant_release.lua
	reentrantReleaseLua    string
	reentrantReleaseScript = redis.NewScript(reentrantReleaseLua)
)

// errNoOwner is the error of an acquire by the empty owner.
var errNoOwner = errors.New("dlock: a reentrant lock needs a non-empty owner")

// Reentrant is the lua lock made reentrant, as Redisson's RLock is. The
// token is not a fresh UUID per acquisition but the name of an owner (a
// request id, say): the key is a Redis hash whose one field names the
// holder and counts its holds (HINCRBY and PEXPIRE, in one Lua script), an
// acquire by the owner that holds the key nests at once instead of
// waiting, and the key goes only when the count is back to zero. Each
// acquisition still returns its own *Lock handle, whose Token is the
// owner, renewed by its own watchdog and released on its own, in any
// order. No hold ever shortens the key's TTL, so each handle's Validity
// holds whatever the owner's other holds ask for.
//
// Go code usually does without reentrancy. Go has no goroutine identity
// for a lock to recognise its holder by, as Java's ReentrantLock has the
// thread; and it needs none: the *Lock handle is the proof of ownership,
// and the code that took the lock passes the handle, or its Context, down
// the call chain, so a callee that needs the lock is handed it rather than
// taking it again. (A callee that takes it again from a Locker waits for
// its own caller until its wait runs out.)
//
// Reentrancy earns its place where the handle cannot be passed down: a
// request that re-enters a locked section through a callback or hook it
// does not control; layered services that each take the same product lock
// under one request id, without knowing whether a layer above took it
// already; a lock held across several processes that act as one logical
// owner (a job and the workers it hands pieces to, under the job's id).
// The owner's name is then the proof of ownership, so it must be unique to
// that owner: whoever knows it can nest, refresh and release. And an
// owner's holds are counted, not told apart: a handle whose hold expired
// unnoticed (its context ended, so its watchdog stopped) would, once the
// same owner has taken the key again, give back a hold that is not its
// own. Redisson shares both traits.
//
// A key locked here holds a hash: do not lock it with the other lockers
// too, which store a string. Waiting is the waiting every mode shares
// (wait.go), through one waiting room, hence one pub/sub connection, for
// all the owners of a Reentrant. It is not one of the Modes: the shop's
// locks need no reentrancy. Reentrant is safe for concurrent use.
type Reentrant struct {
	client redis.UniversalClient
	room   *room
}

// NewReentrant returns a reentrant locker on c, which must not be nil and
// stays the caller's to close, after the locker's Close. Build c with
// ContextTimeoutEnabled so that context deadlines also cut a hung Redis
// call short.
func NewReentrant(c redis.UniversalClient) *Reentrant {
	return &Reentrant{client: c, room: newRoom([]redis.UniversalClient{c}, 1)}
}

// Close stops listening for releases and waits for that to end, as
// Locker's Close does, for every owner of m. It does not close the Redis
// client and always returns nil. Calling it again does nothing.
func (m *Reentrant) Close() error {
	m.room.close()
	return nil
}

// As returns m's locks for owner, which must not be empty (their acquires
// fail if it is). The view is cheap and safe for concurrent use: make one
// per request, or per job, and hand it to the code that locks on the
// owner's behalf.
func (m *Reentrant) As(owner string) *Owned {
	o := &Owned{m: m, owner: owner}
	// A waiting of its own, since the attempts are this owner's, but m's
	// room, shared by all owners.
	o.w = &waiting{try: o.try, room: m.room}
	return o
}

// Owned is a Reentrant bound to one owner: its acquisitions of a key nest
// with each other and keep every other owner out. The goroutines that use
// it share the owner's holds. It is safe for concurrent use.
type Owned struct {
	m     *Reentrant
	owner string
	w     *waiting
}

// Owner returns the owner o acquires for.
func (o *Owned) Owner() string { return o.owner }

// TryLock makes one attempt: it takes key if it is free, nests if the
// owner holds it already, and returns ErrNotObtained if another owner
// holds it and ErrUnavailable if Redis cannot be reached. The handle's
// watchdog runs until Release or until ctx ends.
func (o *Owned) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	l, _, err := o.try(ctx, key, ttl, asker{})
	return l, err
}

// Lock takes key for ttl, nesting at once if the owner holds it already,
// and otherwise waiting at most wait for the other owner to let go and
// never past ctx's deadline, with the errors described on Locker.
func (o *Owned) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	// One attempt before queueing: a nested acquire must never queue, for
	// the waiter at the head of the queue may be waiting for this very
	// owner's release.
	start := time.Now()
	l, rt, err := o.try(ctx, key, ttl, asker{})
	switch {
	case err == nil:
		return l, nil
	case wait > 0 && ctx.Err() != nil:
		return nil, TimedOut(ctx, key, wait, nil)
	case !rt.held:
		return nil, err
	}
	rest := wait - time.Since(start)
	if rest <= 0 {
		return nil, TimedOut(ctx, key, wait, err)
	}
	// Another owner holds it: wait like any lock. (Goroutines of this owner
	// queued here come out one at a time, each waiting for the release of
	// the one before, as the queue cannot tell owners apart.)
	return o.w.Lock(ctx, key, ttl, rest)
}

// try tries once (the seam of wait.go); if another owner holds the key, a
// waiter may sleep until its key would expire.
func (o *Owned) try(ctx context.Context, key string, ttl time.Duration, _ asker) (*Lock, retry, error) {
	if err := CheckTTL(ttl); err != nil {
		return nil, retry{}, err
	}
	if o.owner == "" {
		return nil, retry{}, errNoOwner
	}
	start := time.Now()
	res, err := reentrantAcquireScript.Run(ctx, o.m.client, []string{key}, o.owner, ttl.Milliseconds()).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("reentrant_acquire.lua returned %v, want two numbers", res)
	}
	if err != nil {
		return nil, retry{}, redisErr(ctx, err, "acquire", key)
	}
	if res[0] != 1 {
		pttl := time.Duration(res[1]) * time.Millisecond // -1ms: no expiry
		return nil, retry{held: true, after: untilExpiry(pttl)}, fmt.Errorf("%w: %q is another owner's", ErrNotObtained, key)
	}
	// Valid for the TTL counted from before the script was sent: the
	// script never leaves the key a shorter one.
	return newLock(ctx, key, o.owner, ttl, start.Add(ttl), o.m, true), retry{}, nil
}

// refresh extends the key to at least ttl if the owner still holds it.
func (m *Reentrant) refresh(ctx context.Context, l *Lock, ttl time.Duration) (time.Duration, error) {
	n, err := reentrantRefreshScript.Run(ctx, m.client, []string{l.key}, l.token, ttl.Milliseconds()).Int64()
	if err != nil {
		return 0, redisErr(ctx, err, "refresh", l.key)
	}
	if n != 1 {
		return 0, notHeld(l.key, "expired or was taken over")
	}
	return ttl, nil
}

// release gives back this handle's hold. The owner's last one deletes the
// key and, unless quiet, announces the release to the waiters, in the
// same script; the others leave the key to the holds still out, and need
// no announcement.
func (m *Reentrant) release(ctx context.Context, l *Lock, quiet bool) (announced bool, _ error) {
	channel := announce.Channel(l.key)
	if quiet {
		channel = ""
	}
	left, err := reentrantReleaseScript.Run(ctx, m.client, []string{l.key}, l.token, channel).Int64()
	switch {
	case err != nil:
		return false, redisErr(ctx, err, "release", l.key)
	case left < 0:
		return false, notHeld(l.key, "expired or was taken over")
	}
	return !quiet || left > 0, nil
}
