package dlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Waiters whose context is cancelled, the head among them in the middle of
// its try, leave nothing behind: no goroutine still waiting, an empty
// queue, and a locker whose next Lock gets the key as soon as the holder
// lets go.
func TestAttack45CancelledWaitersLeaveNothing(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeNaive, dlock.ModeLua, dlock.ModeRedlock} {
			t.Run(string(mode), func(t *testing.T) {
				bg := context.Background()
				key := r.Key("cancel-" + string(mode))
				a := newLocker(t, r, mode)
				slow := newDelayHook(func(cmd redis.Cmder) bool { return isAcquire(cmd) || cmd.Name() == "setnx" }, true, 0)
				b := hookedLocker(t, r, mode, slow, allNodes(mode)...)
				held, err := a.TryLock(bg, key, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(bg)
				const waiters = 20
				got := make(chan acquired, waiters)
				for range waiters {
					go func() { got <- <-lockLater(ctx, b, key, 10*time.Second, 30*time.Second) }()
				}
				waitQueued(t, b, key, waiters)
				before := slow.hits.Load()
				slow.delay.Store(int64(time.Hour)) // the head's next try hangs until cancelled
				testenv.WaitFor(t, 5*time.Second, "the head inside its next try", func() bool { return slow.hits.Load() > before })
				cancel()
				for range waiters {
					w := <-got
					if w.err == nil {
						_ = w.l.Release(bg)
						t.Errorf("a cancelled waiter got the lock")
					} else if !errors.Is(w.err, dlock.ErrTimeout) && !errors.Is(w.err, context.Canceled) {
						t.Errorf("a cancelled waiter's Lock = %v, want ErrTimeout wrapping context.Canceled", w.err)
					}
				}
				slow.delay.Store(0)
				testenv.WaitFor(t, 3*time.Second, "no goroutine left in a Lock", func() bool {
					return goroutinesIn("dlock.(*waiting).lock") == 0 && goroutinesIn("waitroom.(*Room).Wait") == 0
				})
				if n := dlock.Queued(b, key); n != 0 {
					t.Errorf("%d waiters still queued after every Lock returned", n)
				}
				next := lockLater(bg, b, key, time.Second, 20*time.Second)
				waitQueued(t, b, key, 1)
				released := time.Now()
				if err := held.Release(bg); err != nil {
					t.Fatal(err)
				}
				w := <-next
				if w.err != nil {
					t.Fatalf("Lock after the cancelled waiters left = %v", w.err)
				}
				_ = w.l.Release(bg)
				if took := w.at.Sub(released); took > 2*time.Second {
					t.Errorf("Lock after the cancelled waiters left got the key %v after its release, want promptly", took)
				}
			})
		}
	})
}

// afterFirst runs fn once, right after the first command match picks has
// answered, before its caller sees the answer.
type afterFirst struct {
	match func(redis.Cmder) bool
	fn    func()
	once  sync.Once
}

func (h *afterFirst) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *afterFirst) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.match(cmd) {
			h.once.Do(h.fn)
		}
		return err
	}
}

func (h *afterFirst) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// The holder releases right after the waiter's first try was refused and
// before the waiter has even asked to hear the key's releases: the
// announcement goes to nobody. The waiter must not sleep until its
// fallback (a second, with a long TTL): the subscription's confirmation
// wakes it, and it finds the key free.
func TestAttack45ReleaseBeforeWaiterSubscribesIsNotLost(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("early-release-" + string(mode))
				a := newLocker(t, r, mode)
				held, err := a.TryLock(ctx, key, 30*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				var released time.Time
				hook := &afterFirst{match: isAcquire, fn: func() {
					released = time.Now()
					if err := held.Release(ctx); err != nil {
						t.Errorf("Release: %v", err)
					}
				}}
				cs := clients(t, r)
				for _, i := range allNodes(mode) {
					cs[i].AddHook(hook)
				}
				b, err := dlock.New(mode, cs)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = b.Close() }()
				l, err := b.Lock(ctx, key, 30*time.Second, 10*time.Second)
				if err != nil {
					t.Fatalf("Lock: %v", err)
				}
				defer func() { _ = l.Release(ctx) }()
				if took := time.Since(released); took > 500*time.Millisecond {
					t.Errorf("the waiter got the key %v after a release made before it subscribed, want well under its 1s fallback", took)
				}
			})
		}
	})
}
