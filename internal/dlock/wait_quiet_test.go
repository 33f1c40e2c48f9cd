package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// A quiet release (one held back in the middle of a run) whose Release
// reports an error although the key was deleted is announced all the same,
// as a release that is not held back is by its own script: another
// process's waiter wakes at once, not after its fallback sleep.
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
		waitHears(t, b, key)
		lateReply.delay.Store(int64(100 * time.Millisecond))
		rctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err = al.Release(rctx)
		cancel()
		released := time.Now()
		t.Logf("Release = %v", err)
		if v, _ := r.Clients()[0].Get(ctx, key).Result(); v == al.Token() {
			t.Fatalf("key still a's: the release did not run")
		}
		if d := (<-got).Sub(released); d > announcedWake {
			t.Errorf("key deleted, but the other process's waiter woke %v later", d.Round(time.Millisecond))
		}
	})
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
		got := lockLater(ctx, a, key, ttl, 30*time.Second)
		waitHears(t, a, key)
		_ = lb.Release(ctx)
		first := <-got
		if first.err != nil {
			t.Fatalf("A: first Lock: %v", first.err)
		}
		la := first.l

		// A second goroutine of A and a waiter in C queue for the key.
		aErr := make(chan error, 1)
		go func() {
			l, err := a.Lock(ctx, key, ttl, 5*time.Second)
			if err == nil {
				_ = l.Release(ctx)
			}
			aErr <- err
		}()
		cGot := lockLater(ctx, c, key, ttl, 30*time.Second)
		waitQueued(t, a, key, 1) // behind A's own holder
		waitHears(t, c, key)

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
		if d := tc.at.Sub(released); d > announcedWake {
			t.Errorf("C got the key %v after A's release, want well under its fallback sleep", d.Round(time.Millisecond))
		}
	})
}
