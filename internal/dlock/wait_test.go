package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// waitingModes are the modes whose Lock can actually wait.
var waitingModes = []dlock.Mode{dlock.ModeNaive, dlock.ModeLua, dlock.ModeRedlock, dlock.ModeFenced}

// Lock gives up promptly when its wait runs out or its context ends, for
// the head waiter and for those queued behind it, and says which.
func TestLockGivesUp(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range testenv.Short([]dlock.Mode{dlock.ModeRedlock}, waitingModes) {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("held-" + string(mode))
				held, err := newLocker(t, r, mode).TryLock(ctx, key, 10*time.Second)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				t.Cleanup(func() { _ = held.Release(context.Background()) })
				waiter := newLocker(t, r, mode)

				wait := 200 * time.Millisecond
				cases := []struct {
					name    string
					ctx     func() (context.Context, context.CancelFunc)
					wait    time.Duration
					wantCtx error // also wrapped, besides ErrTimeout
				}{
					{"wait runs out", func() (context.Context, context.CancelFunc) {
						return context.WithCancel(ctx)
					}, wait, nil},
					{"ctx cancelled", func() (context.Context, context.CancelFunc) {
						cctx, cancel := context.WithCancel(ctx)
						time.AfterFunc(wait, cancel)
						return cctx, cancel
					}, time.Minute, context.Canceled},
					{"ctx deadline", func() (context.Context, context.CancelFunc) {
						return context.WithTimeout(ctx, wait)
					}, time.Minute, context.DeadlineExceeded},
				}
				for _, c := range cases {
					cctx, cancel := c.ctx()
					defer cancel()
					// Three waiters each: one heads the queue, two queue behind it.
					errs := make(chan error, 3)
					start := time.Now()
					var wg sync.WaitGroup
					for range 3 {
						wg.Go(func() {
							l, err := waiter.Lock(cctx, key, time.Second, c.wait)
							if err == nil {
								_ = l.Release(ctx)
								err = errors.New("got a lock that is held elsewhere")
							}
							errs <- err
						})
					}
					wg.Wait()
					close(errs)
					if took := time.Since(start); took < wait/2 {
						t.Errorf("%s: gave up after %v, want it to wait about %v", c.name, took, wait)
					}
					within(t, c.name, time.Since(start), 10*wait)
					for err := range errs {
						if !errors.Is(err, dlock.ErrTimeout) {
							t.Errorf("%s: Lock = %v, want ErrTimeout", c.name, err)
						}
						if c.wantCtx != nil && !errors.Is(err, c.wantCtx) {
							t.Errorf("%s: Lock = %v, want it to wrap %v", c.name, err, c.wantCtx)
						}
						if c.wantCtx == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
							t.Errorf("%s: Lock = %v, want no context error", c.name, err)
						}
					}
				}
			})
		}
	})
}

// When Redis goes down under waiting goroutines, they all return
// ErrUnavailable promptly rather than after their wait, and once the
// lockers are closed no goroutine of the package is left behind.
func TestLockUnavailableWhileWaiting(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeLua, dlock.ModeRedlock} {
			t.Run(string(mode), func(t *testing.T) {
				before := dlockGoroutines()
				ctx := context.Background()
				key := r.Key("down-" + string(mode))
				holder, err := dlock.New(mode, clients(t, r))
				if err != nil {
					t.Fatal(err)
				}
				waiter, err := dlock.New(mode, clients(t, r))
				if err != nil {
					t.Fatal(err)
				}
				held, err := holder.TryLock(ctx, key, 5*time.Second)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}

				errs := make(chan error, 3)
				var wg sync.WaitGroup
				for range 3 {
					wg.Go(func() {
						l, err := waiter.Lock(ctx, key, time.Second, time.Minute)
						if err == nil {
							_ = l.Release(ctx)
							err = errors.New("got a lock that is held elsewhere")
						}
						errs <- err
					})
				}
				waitQueued(t, waiter, key, 3)
				waitHears(t, waiter, key) // so that the lost subscription wakes the head
				down := []int{0}
				if mode == dlock.ModeRedlock {
					down = []int{0, 1, 2}
				}
				start := time.Now()
				for _, i := range down {
					r.Stop(i)
				}
				wg.Wait()
				close(errs)
				within(t, "waiters noticing Redis is down", time.Since(start), 2*time.Second)
				for err := range errs {
					if !errors.Is(err, dlock.ErrUnavailable) {
						t.Errorf("Lock = %v, want ErrUnavailable", err)
					}
				}

				_ = held.Release(ctx) // fails: Redis is down; stops the watchdog
				_, _ = holder.Close(), waiter.Close()
				testenv.WaitFor(t, 3*time.Second, fmt.Sprintf("at most %d goroutines of package dlock after Close, as before", before),
					func() bool { return dlockGoroutines() <= before })
				for _, i := range down {
					r.Start(i)
				}
			})
		}
	})
}

// Lock with no wait reports a held lock as ErrTimeout, as documented, but a
// majority of redlock nodes too slow to answer as ErrUnavailable.
func TestLockNoWaitSlowNodesIsUnavailable(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		ttl := 500 * time.Millisecond // per-node timeout 100ms
		slowSet := newDelayHook(isAcquire, true, 0)
		rl := hookedLocker(t, r, dlock.ModeRedlock, slowSet, 0, 1, 2)

		key := r.Key("held")
		held, err := newLocker(t, r, dlock.ModeRedlock).TryLock(ctx, key, 5*time.Second)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		defer func() { _ = held.Release(ctx) }()
		if _, err := rl.Lock(ctx, key, ttl, 0); !errors.Is(err, dlock.ErrTimeout) {
			t.Errorf("Lock(wait 0) of a held key = %v, want ErrTimeout", err)
		}

		slowSet.delay.Store(int64(time.Second))
		_, err = rl.Lock(ctx, r.Key("free"), ttl, 0)
		if !errors.Is(err, dlock.ErrUnavailable) || errors.Is(err, dlock.ErrTimeout) {
			t.Errorf("Lock(wait 0) with 3 of 5 nodes 1s slow = %v, want ErrUnavailable, not ErrTimeout", err)
		}
	})
}

// No dlock goroutine outlives Close and the handles' Release, after
// contended waiting with quiet releases pending.
func TestNoGoroutineLeftAfterClose(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		before := dlockGoroutines()
		for _, mode := range []dlock.Mode{dlock.ModeNaive, dlock.ModeLua, dlock.ModeRedlock} {
			ls := []dlock.Locker{}
			for range 2 {
				l, err := dlock.New(mode, clients(t, r))
				if err != nil {
					t.Fatal(err)
				}
				ls = append(ls, l)
			}
			ctx := context.Background()
			key := r.Key("leak-" + string(mode))
			var wg sync.WaitGroup
			for g := range 12 {
				wg.Go(func() {
					for range 5 {
						l, err := ls[g%2].Lock(ctx, key, time.Second, 5*time.Second)
						if err != nil {
							t.Errorf("Lock: %v", err)
							return
						}
						_ = l.Release(ctx)
					}
				})
			}
			wg.Wait()
			for _, l := range ls {
				_ = l.Close()
			}
		}
		testenv.WaitFor(t, 2*time.Second, fmt.Sprintf("at most %d dlock goroutines, as before", before),
			func() bool { return dlockGoroutines() <= before })
	})
}

// Waiters whose context is cancelled, the head among them in the middle of
// its try, leave nothing behind: no goroutine still waiting, an empty
// queue, and a locker whose next Lock gets the key as soon as the holder
// lets go.
func TestCancelledWaitersLeaveNothing(t *testing.T) {
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
