package dlock

import (
	"context"
	"errors"
	"time"

	"github.com/flashsale/flashsale/internal/dlock/waitroom"
	"github.com/redis/go-redis/v9"
)

// waiting gives Naive, Lua and Redlock their Lock and Close. The seam to
// package waitroom is the mode's try, whose waitroom.Retry says whether and
// when to try again, and its release, quiet when the room asks (inRoom).
type waiting struct {
	try  tryFunc
	room *waitroom.Room
	obs  Observer // nil: nobody listens (see Observe)
}

// tryFunc is a mode's one attempt for key: the zero Asker is a one-off try
// (TryLock, or Lock with no wait), a room's head gets one attempt.
type tryFunc func(ctx context.Context, key string, ttl time.Duration, by waitroom.Asker) (*Lock, waitroom.Retry, error)

func newWaiting(nodes []redis.UniversalClient, quorum int, try tryFunc) *waiting {
	return &waiting{try: try, room: waitroom.New(nodes, quorum)}
}

// Lock takes key for ttl, as described on Locker.
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

// Close stops listening for releases and waits for that to end, as
// described on Locker. It always returns nil.
func (w *waiting) Close() error {
	w.room.Close()
	return nil
}

// inRoom is the holder of a waiter's lock: its release and abandon tell the
// room, which decides whether the release is quiet.
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
