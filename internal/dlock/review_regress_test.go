package dlock_test

// Regressions found by attacking the waiting and the handle fixes: lost
// announcements, and a failed Refresh that shortened the lock.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/testenv"
)

// handOff has waiter Lock key in a goroutine, lets it find the key held,
// releases held, and returns how long after the release the waiter got it.
func handOff(t *testing.T, waiter dlock.Locker, key string, ttl time.Duration, held *dlock.Lock) (*dlock.Lock, time.Duration) {
	t.Helper()
	ctx := context.Background()
	got := lockLater(ctx, waiter, key, ttl, 5*time.Second)
	time.Sleep(30 * time.Millisecond) // the waiter found it held, subscribed, sleeps
	if err := held.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	released := time.Now()
	r := <-got
	if r.err != nil {
		t.Fatalf("waiter Lock: %v", r.err)
	}
	return r.l, r.at.Sub(released)
}

// With exactly a quorum of nodes up, a redlock waiter must still be
// woken by every release (each is announced on all three live nodes).
func TestRedlockWaiterWakesWithOnlyAQuorumUp(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		holder, waiter := newLocker(t, r, dlock.ModeRedlock), newLocker(t, r, dlock.ModeRedlock)
		r.Stop(3)
		r.Stop(4)
		defer r.Start(3)
		defer r.Start(4)
		key := r.Key("heard")
		ttl := 5 * time.Second
		slow := 0
		for i := range 30 {
			h, err := holder.TryLock(ctx, key, ttl)
			if err != nil {
				t.Fatalf("cycle %d: holder TryLock: %v", i, err)
			}
			wl, d := handOff(t, waiter, key, ttl, h)
			if d > 200*time.Millisecond {
				slow++
				t.Errorf("cycle %d: waiter woke %v after the release (fallback, not the announcement)", i, d.Round(time.Millisecond))
			}
			if err := wl.Release(ctx); err != nil {
				t.Fatalf("cycle %d: waiter Release: %v", i, err)
			}
			time.Sleep(5 * time.Millisecond) // let the quiet release's grace announce
			if slow == 3 {
				break
			}
		}
	})
}

// "Handles already returned keep working" after Close: their release
// must still wake another process's waiter promptly.
func TestReleaseAfterCloseIsAnnounced(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeLua, dlock.ModeRedlock} {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("close-" + string(mode))
				ttl := 5 * time.Second
				a, b := newLocker(t, r, mode), newLocker(t, r, mode)
				// A must have waited once, so that it listens and runs.
				bl, err := b.TryLock(ctx, key, ttl)
				if err != nil {
					t.Fatal(err)
				}
				al, d := handOff(t, a, key, ttl, bl)
				t.Logf("B->A hand-off (A open): %v", d.Round(time.Millisecond))
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				_, d = handOff(t, b, key, ttl, al)
				if d > 200*time.Millisecond {
					t.Errorf("A released after its Close: B woke %v later, want within 200ms", d.Round(time.Millisecond))
				}
			})
		}
	})
}

// A Refresh to a shorter TTL that reaches Redis but whose reply comes
// too late for its ctx must not leave Context live after the key expired.
func TestFailedShorterRefreshEndsContextInTime(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("short-" + string(mode))
				short := 300 * time.Millisecond
				lateReply := newDelayHook(isRefreshTo(t, short), false, 200*time.Millisecond)
				owner := hookedLocker(t, r, mode, lateReply, allNodes(mode)...)
				other := newLocker(t, r, mode)
				l, err := owner.TryLock(ctx, key, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release(context.Background())
				rctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
				err = l.Refresh(rctx, short)
				cancel()
				t.Logf("Refresh(%v) = %v", short, err)
				if errors.Is(err, dlock.ErrNotHeld) {
					t.Fatalf("unexpected ErrNotHeld")
				}
				if v := l.Validity(); v > short {
					t.Errorf("Validity after a failed Refresh(%v) = %v, want at most %v: it may have been applied", short, v, short)
				}
				// The watchdog, told the lock may end sooner, renews it in
				// time; if another locker got in all the same, the first
				// handle's work must have been stopped.
				ol, at := pollTake(t, other, key, 2*time.Second)
				if ol == nil {
					return // renewed in time: still held, as Context says
				}
				defer ol.Release(context.Background())
				if l.Context().Err() == nil {
					t.Errorf("another locker holds the key since %v, yet the first handle's Context is live (Validity %v)",
						time.Since(at).Round(time.Millisecond), l.Validity().Round(time.Millisecond))
				}
			})
		}
	})
}

// A quiet release (mid-run) whose Release reports an error although
// the key was deleted: nobody announces it, unlike a non-quiet release,
// whose script PUBLISHes in the same call.
func TestQuietReleaseThatFailsIsAnnounced(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("quiet-err")
		ttl := 5 * time.Second
		lateReply := newDelayHook(isRelease(t), false, 0)
		a := hookedLocker(t, r, dlock.ModeLua, lateReply, 0)
		b := newLocker(t, r, dlock.ModeLua)
		bl, err := b.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		al, _ := handOff(t, a, key, ttl, bl) // a listens now, run 1: its next release is quiet
		got := make(chan time.Time, 1)
		go func() {
			l, err := b.Lock(ctx, key, ttl, 5*time.Second)
			if err != nil {
				t.Errorf("b.Lock: %v", err)
			} else {
				_ = l.Release(ctx)
			}
			got <- time.Now()
		}()
		time.Sleep(30 * time.Millisecond)
		lateReply.delay.Store(int64(100 * time.Millisecond))
		rctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err = al.Release(rctx)
		cancel()
		released := time.Now()
		t.Logf("Release = %v", err)
		if v, _ := r.Clients()[0].Get(ctx, key).Result(); v == al.Token() {
			t.Fatalf("key still a's: the release did not run")
		}
		if d := (<-got).Sub(released); d > 200*time.Millisecond {
			t.Errorf("key deleted, but the other process's waiter woke %v later", d.Round(time.Millisecond))
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
		deadline := time.Now().Add(2 * time.Second)
		for dlockGoroutines() > before && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := dlockGoroutines(); n > before {
			t.Errorf("%d dlock goroutines left (%d before)", n, before)
		}
	})
}

// failSET makes SET fail while it is on: a Redis that refuses this process's
// acquires (the other commands go through).
type failSET struct{ on atomic.Bool }

func (h *failSET) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *failSET) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() && cmd.Name() == "set" {
			err := errors.New("injected: SET refused")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}
func (h *failSET) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A release held back in the middle of a run is the next local head's to
// announce once it starts to take the key back; if that attempt fails for
// good (here, Redis refuses it), the head must still announce the release
// as it leaves, or the other processes' waiters sleep until their fallback.
func TestHeldBackReleaseAnnouncedWhenRetakeFails(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("retake")
		ttl := 5 * time.Second // fallback sleeps of up to a second
		fail := &failSET{}
		cs := clients(t, r)
		cs[0].AddHook(fail)
		a, err := dlock.New(dlock.ModeLua, cs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		b, c := newLocker(t, r, dlock.ModeLua), newLocker(t, r, dlock.ModeLua)

		// A waits once for B, so it listens to the key: its releases in a
		// run are held back from now on.
		lb, err := b.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *dlock.Lock, 1)
		go func() {
			l, err := a.Lock(ctx, key, ttl, 5*time.Second)
			if err != nil {
				t.Errorf("A: first Lock: %v", err)
			}
			got <- l
		}()
		time.Sleep(100 * time.Millisecond)
		_ = lb.Release(ctx)
		la := <-got
		if la == nil {
			return
		}

		// A second goroutine of A and a waiter in C queue for the key.
		aErr := make(chan error, 1)
		go func() {
			l, err := a.Lock(ctx, key, ttl, 5*time.Second)
			if err == nil {
				_ = l.Release(ctx)
			}
			aErr <- err
		}()
		cGot := lockLater(ctx, c, key, ttl, 5*time.Second)
		time.Sleep(100 * time.Millisecond)

		fail.on.Store(true)
		released := time.Now()
		if err := la.Release(ctx); err != nil {
			t.Fatalf("A: Release: %v", err)
		}
		if err := <-aErr; !errors.Is(err, dlock.ErrUnavailable) {
			t.Errorf("A: second Lock with SET refused = %v, want ErrUnavailable", err)
		}
		tc := <-cGot
		if tc.err != nil {
			t.Fatalf("C: Lock: %v", tc.err)
		}
		defer tc.l.Release(ctx)
		if d := tc.at.Sub(released); d > 300*time.Millisecond {
			t.Errorf("C got the key %v after A's release, want well under its fallback sleep", d.Round(time.Millisecond))
		}
	})
}
