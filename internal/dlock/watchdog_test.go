package dlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// The watchdog keeps a lock through work three times its TTL, and cancels
// the work's context as soon as a renewal finds the lock gone.
func TestWatchdog(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range timedModes() {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("watched-" + string(mode))
				ttl := 300 * time.Millisecond
				holder, other := newLocker(t, r, mode), newLocker(t, r, mode)

				l, err := holder.TryLock(ctx, key, ttl)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(ttl / 5) {
					if err := l.Context().Err(); err != nil {
						t.Fatalf("work context ended while the lock was held: %v", context.Cause(l.Context()))
					}
					if _, err := other.TryLock(ctx, key, ttl); !errors.Is(err, dlock.ErrNotObtained) {
						t.Fatalf("TryLock by another process during the work = %v, want ErrNotObtained", err)
					}
				}

				// Kill renewal: the key vanishes behind the holder's back.
				for _, node := range lockNodes(r, mode) {
					if err := node.Del(ctx, key).Err(); err != nil {
						t.Fatal(err)
					}
				}
				select {
				case <-l.Context().Done():
				case <-time.After(10 * ttl):
					t.Fatalf("work context still live %v after the key was deleted", 10*ttl)
				}
				if cause := context.Cause(l.Context()); !errors.Is(cause, dlock.ErrNotHeld) {
					t.Errorf("context.Cause = %v, want ErrNotHeld", cause)
				}
				if err := l.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
					t.Errorf("Release of a lost lock = %v, want ErrNotHeld", err)
				}
			})
		}
	})
}

// When renewals fail because Redis is down or hangs, the watchdog cancels
// the work's context no later than the lock's validity runs out.
func TestWatchdogRedisDown(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range timedModes() {
			for _, fault := range []string{"down", "hung"} {
				t.Run(string(mode)+"/"+fault, func(t *testing.T) {
					ctx := context.Background()
					ttl := 300 * time.Millisecond
					l, err := newLocker(t, r, mode).TryLock(ctx, r.Key("watched-"+string(mode)+fault), ttl)
					if err != nil {
						t.Fatalf("TryLock: %v", err)
					}
					nodes := []int{0}
					if mode == dlock.ModeRedlock {
						nodes = []int{0, 1, 2}
					}
					for _, i := range nodes {
						if fault == "down" {
							r.Stop(i)
							defer r.Start(i)
						} else {
							r.SetDelay(i, time.Minute)
							defer r.SetDelay(i, 0)
						}
					}
					validity := l.Validity()
					start := time.Now()
					select {
					case <-l.Context().Done():
					case <-time.After(10 * ttl):
						t.Fatalf("work context still live %v after Redis was %s", 10*ttl, fault)
					}
					// The context must end about when the validity does,
					// not when a hung call (a minute) gives up: one TTL of
					// margin for scheduling on a loaded machine.
					within(t, "cancelling the work context", time.Since(start), validity+ttl)
					if cause := context.Cause(l.Context()); !errors.Is(cause, dlock.ErrNotHeld) {
						t.Errorf("context.Cause = %v, want ErrNotHeld", cause)
					}
					if fault == "down" {
						_ = l.Release(ctx) // fails at once; a hung node would hold it up
					}
				})
			}
		}
	})
}

// A lua handle whose acquire took most of its TTL has less validity left
// than ttl/3, the renewal interval. With renewals hanging, its context ends
// when that validity runs out, not at the first renewal tick, and the cause
// says what happened.
func TestLuaFirstRenewalDueWithinValidity(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		ttl := 2400 * time.Millisecond // first tick at ttl/3 = 800ms
		slowSet := newDelayHook(isAcquire, false, 2*time.Second)
		hang := newDelayHook(isRefresh(t), false, 0)
		cs := clients(t, r)
		cs[0].AddHook(slowSet)
		cs[0].AddHook(hang)
		a := dlock.NewLua(cs[0])
		t.Cleanup(func() { _ = a.Close() })

		l, err := a.TryLock(ctx, r.Key("short-validity"), ttl)
		if errors.Is(err, dlock.ErrNotObtained) {
			t.Skipf("the acquire took the whole %v TTL on this machine: %v", ttl, err)
		}
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		defer func() { _ = l.Release(ctx) }()
		handedOut, validity := time.Now(), l.Validity()
		hang.delay.Store(int64(time.Minute))
		if validity <= 0 || validity >= ttl/3 {
			t.Fatalf("Validity after a 2s acquire = %v, want in (0, %v)", validity, ttl/3)
		}

		ended := endedBy(l.Context(), 3*time.Second)
		if ended.IsZero() || ended.Sub(handedOut) > validity+150*time.Millisecond {
			t.Errorf("context ended %v after TryLock returned, want within its validity %v (+150ms)",
				lateBy(ended, handedOut, 3*time.Second), validity)
		}
		cause := context.Cause(l.Context())
		if !errors.Is(cause, dlock.ErrNotHeld) {
			t.Errorf("context.Cause = %v, want ErrNotHeld", cause)
		}
		if cause != nil && strings.Contains(cause.Error(), "<nil>") {
			t.Errorf("context.Cause = %q, want it to say what happened, not quote a nil error", cause)
		}
		if tried := hang.hits.Load(); tried == 0 && cause != nil && strings.Contains(cause.Error(), "failed") {
			t.Errorf("context.Cause = %q, but no renewal was sent", cause)
		}
	})
}
