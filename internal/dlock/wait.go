package dlock

import (
	"context"
	"errors"
	"time"

	"github.com/flashsale/flashsale/internal/dlock/waitroom"
	"github.com/redis/go-redis/v9"
)

// waiting gives Naive, Lua and Redlock their Lock and Close. The seam to
// the waiting room (package waitroom) is two functions of the mode: try
// makes one attempt and, when it fails, says in a waitroom.Retry whether
// waiting can still help and when to try again; and the mode's release
// (lock.go's holder) announces the release unless the room asks it to be
// quiet (inRoom). The rest is the room's.
type waiting struct {
	try  tryFunc
	room *waitroom.Room
	obs  Observer // nil: nobody listens (see Observe)
}

// tryFunc is a mode's one attempt for key, made as by says: the zero
// Asker is a one-off try (TryLock, or Lock with no wait: for Redlock, that
// retries a split vote as TryLock says), a room's head gets one attempt.
type tryFunc func(ctx context.Context, key string, ttl time.Duration, by waitroom.Asker) (*Lock, waitroom.Retry, error)

func newWaiting(nodes []redis.UniversalClient, quorum int, try tryFunc) *waiting {
	return &waiting{try: try, room: waitroom.New(nodes, quorum)}
}

// Lock takes key for ttl, waiting at most wait for a holder to let go and
// never past ctx's deadline, as described on Locker. With wait <= 0 it
// makes one attempt, as TryLock does, and reports a held lock as
// ErrTimeout.
func (w *waiting) Lock(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	return w.lock(ctx, key, ttl, wait, false)
}

// lock is Lock, for a waiter that takes the key in turns (InTurns) or not.
func (w *waiting) lock(ctx context.Context, key string, ttl, wait time.Duration, inTurn bool) (*Lock, error) {
	if wait <= 0 {
		l, _, err := w.try(ctx, key, ttl, waitroom.Asker{})
		if errors.Is(err, ErrNotObtained) {
			return nil, TimedOut(ctx, key, wait, err)
		}
		return l, err
	}
	h, err := w.room.Wait(ctx, key, wait, inTurn, func(ctx context.Context, by waitroom.Asker) (waitroom.Held, waitroom.Retry, error) {
		l, rt, err := w.try(ctx, key, ttl, by)
		if err != nil {
			if ctx.Err() == nil && (rt.Held || rt.Slow) {
				w.retried() // the room tries again
			}
			return nil, rt, err
		}
		l.mu.Lock() // the watchdog may be reading it
		l.mode = inRoom{l.mode, w.room}
		l.mu.Unlock()
		return l, rt, nil
	})
	var timedOut *waitroom.TimeoutError
	switch {
	case errors.As(err, &timedOut):
		return nil, TimedOut(ctx, key, wait, timedOut.Last)
	case err != nil:
		return nil, err
	}
	return h.(*Lock), nil
}

// Close stops listening for releases and waits for that to end. Handles
// already returned keep working, and so does Lock, though its waiters then
// only wake when the holder's TTL would run out. It does not close the
// Redis clients, which stay the caller's, and always returns nil. Calling
// it again does nothing.
func (w *waiting) Close() error {
	w.room.Close()
	return nil
}

// inRoom is the holder of a lock that a waiter got: its release asks the
// room whether to be quiet and tells it how it went, and its abandon tells
// the room too.
type inRoom struct {
	holder
	room *waitroom.Room
}

func (h inRoom) release(ctx context.Context, l *Lock, _ bool) (bool, error) {
	quiet, done := h.room.Releasing(l)
	announced, err := h.holder.release(ctx, l, quiet)
	done(err == nil, announced)
	return announced, err
}

func (h inRoom) abandon(l *Lock) {
	h.room.Abandoned(l) // nothing released, nothing announced
	if a, ok := h.holder.(abandoner); ok {
		a.abandon(l)
	}
}
