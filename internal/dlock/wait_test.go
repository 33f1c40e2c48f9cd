package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/testenv"
)

// waitingModes are the modes whose Lock can actually wait.
var waitingModes = []dlock.Mode{dlock.ModeNaive, dlock.ModeLua, dlock.ModeRedlock, dlock.ModeFenced}

// Lock gives up promptly when its wait runs out or its context ends, for
// the head waiter and for those queued behind it, and says which.
func TestLockGivesUp(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range waitingModes {
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
				time.Sleep(200 * time.Millisecond) // all three are waiting
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
				deadline := time.Now().Add(3 * time.Second)
				for dlockGoroutines() > before && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if n := dlockGoroutines(); n > before {
					t.Errorf("%d goroutines of package dlock left after Close, want at most %d as before", n, before)
				}
				for _, i := range down {
					r.Start(i)
				}
			})
		}
	})
}

// Three processes contending for one key each get a fair part of the
// acquisitions, whether each has one goroutine asking (the releaser asks
// again at once) or several: none starves. On a quiet machine each gets
// about its share (the benchmarks' min-share, 0.88 or more); this test also
// runs on busy CI machines, where a process whose goroutines are not
// scheduled in time loses races it would win alone (a min-share of 0.48 was
// seen), so it asks for a quarter of the fair share. A lock without the
// fairness policy fails that: redislock's min-share was 0 to 0.19.
func TestFairness(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeLua, dlock.ModeRedlock} {
			for _, perProcess := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%d-per-process", mode, perProcess), func(t *testing.T) {
					ctx := context.Background()
					key := r.Key(fmt.Sprintf("fair-%s-%d", mode, perProcess))
					const processes = 3
					var lockers [processes]dlock.Locker
					var counts [processes]atomic.Int64
					for p := range lockers {
						lockers[p] = newLocker(t, r, mode)
					}

					// Warm up: each locker's subscription starts with its
					// first Lock and takes a moment to be confirmed.
					for _, l := range lockers {
						lk, err := l.Lock(ctx, key+"-warm-up", time.Second, time.Second)
						if err != nil {
							t.Fatalf("warm-up Lock: %v", err)
						}
						_ = lk.Release(ctx)
					}

					// Run for a second and at least 120 acquisitions, enough
					// for the bound to hold by a wide margin (a process at a
					// third gets under a twelfth of 120 with odds under
					// 1e-10), and never more than a few seconds.
					const enough = 120
					var total atomic.Int64
					start := time.Now()
					stop := start.Add(4 * time.Second)
					more := func() bool {
						return (total.Load() < enough || time.Since(start) < time.Second) && time.Now().Before(stop)
					}
					errs := make(chan error, processes*perProcess)
					var wg sync.WaitGroup
					for p := range processes {
						for range perProcess {
							wg.Go(func() {
								for more() {
									l, err := lockers[p].Lock(ctx, key, time.Second, 10*time.Second)
									if err != nil {
										errs <- err
										return
									}
									counts[p].Add(1)
									total.Add(1)
									time.Sleep(time.Millisecond)
									if err := l.Release(ctx); err != nil {
										errs <- err
										return
									}
								}
							})
						}
					}
					wg.Wait()
					close(errs)
					for err := range errs {
						t.Errorf("Lock or Release: %v", err)
					}

					got := make([]int64, processes)
					for p := range counts {
						got[p] = counts[p].Load()
					}
					all := total.Load()
					t.Logf("acquisitions per process: %v", got)
					if all < enough {
						t.Logf("only %d acquisitions in the time allowed: the bound is less sure", all)
					}
					for p, n := range got {
						if n*4*processes < all {
							t.Errorf("process %d got %d of %d acquisitions, under a quarter of its fair share", p, n, all)
						}
					}
				})
			}
		}
	})
}

// A process listens to a key's release announcements only while the key is
// contended: it subscribes once a waiter fails to get the key, and
// unsubscribes a little while after nobody waits any more.
func TestListensOnlyWhileContended(t *testing.T) {
	t.Parallel()
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("listened")
		channel := "dlock:released:" + key
		node := r.Clients()[0]
		subscribers := func() int64 {
			n, err := node.PubSubNumSub(ctx, channel).Result()
			if err != nil {
				t.Fatalf("PUBSUB NUMSUB: %v", err)
			}
			return n[channel]
		}
		waitFor := func(what string, want int64, within time.Duration) {
			t.Helper()
			for end := time.Now().Add(within); subscribers() != want; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(end) {
					t.Fatalf("%s: %d subscribers after %v, want %d", what, subscribers(), within, want)
				}
			}
		}

		holder, waiter := newLocker(t, r, dlock.ModeLua), newLocker(t, r, dlock.ModeLua)
		l, err := waiter.Lock(ctx, key, time.Second, time.Second) // free: no need to listen
		if err != nil {
			t.Fatal(err)
		}
		_ = l.Release(ctx)
		waitFor("uncontended", 0, 0)

		held, err := holder.TryLock(ctx, key, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			l, err := waiter.Lock(ctx, key, time.Second, 5*time.Second)
			if err == nil {
				err = l.Release(ctx)
			}
			got <- err
		}()
		waitFor("while waiting", 1, 2*time.Second)
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("waiter: %v", err)
		}
		waitFor("after the contention", 0, 5*time.Second)
	})
}
