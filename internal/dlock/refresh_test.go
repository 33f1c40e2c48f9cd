package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// After a Refresh to a TTL shorter than the one the lock was taken with,
// another locker gets the key only once the first handle's context has
// ended: the watchdog renews on the new TTL's schedule, or the context ends
// with the validity.
func TestRefreshShorterTTLEndsContextInTime(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range timedModes() {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("shorter-" + string(mode))
				a, b := newLocker(t, r, mode), newLocker(t, r, mode)
				l, err := a.TryLock(ctx, key, 3*time.Second)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				defer func() { _ = l.Release(ctx) }()
				if err := l.Refresh(ctx, 200*time.Millisecond); err != nil {
					t.Fatalf("Refresh(200ms) = %v", err)
				}

				lb, taken := pollTake(t, b, key, time.Second)
				if lb == nil {
					if err := l.Context().Err(); err != nil {
						t.Errorf("first context ended (%v) though nobody else got the key", context.Cause(l.Context()))
					}
					return // renewed on the new schedule all along
				}
				defer func() { _ = lb.Release(ctx) }()
				ended := endedBy(l.Context(), 2*time.Second)
				if ended.IsZero() || ended.Sub(taken) > 100*time.Millisecond {
					t.Errorf("second locker took the key, yet the first handle's context was still live %v later (want it ended by then, 100ms of slack)",
						lateBy(ended, taken, 2*time.Second))
				}
			})
		}
	})
}

// When Redis stops answering renewals after a Refresh to a shorter TTL, the
// context ends when the new, shorter validity runs out, not on the renewal
// schedule of the old TTL.
func TestRefreshShorterTTLThenRenewalsHangEndsContextAtValidity(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				hang := newDelayHook(isRefresh(t), false, 0)
				a := hookedLocker(t, r, mode, hang, majorityNodes(mode)...)
				l, err := a.TryLock(ctx, r.Key("shorter-hung-"+string(mode)), 3*time.Second)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				defer func() { _ = l.Release(ctx) }()
				if err := l.Refresh(ctx, 200*time.Millisecond); err != nil {
					t.Fatalf("Refresh(200ms) = %v", err)
				}
				refreshed, validity := time.Now(), l.Validity()
				hang.delay.Store(int64(time.Minute))

				ended := endedBy(l.Context(), 3*time.Second)
				if ended.IsZero() || ended.Sub(refreshed) > validity+100*time.Millisecond {
					t.Errorf("context ended %v after the Refresh, want within its validity %v (+100ms)",
						lateBy(ended, refreshed, 3*time.Second), validity)
				}
				if cause := context.Cause(l.Context()); !errors.Is(cause, dlock.ErrNotHeld) {
					t.Errorf("context.Cause = %v, want ErrNotHeld", cause)
				}
			})
		}
	})
}

// A Refresh to a short TTL that Redis runs after a watchdog renewal to the
// old, longer TTL, while the renewal's reply is still on its way: Redis keeps
// the short TTL, so the late reply must not extend the validity (nor bring
// back the old TTL), whether it comes after the short validity has run out
// or before. Another locker gets the key only once the first handle's
// context has ended.
func TestRefreshRacingRenewalKeepsValidityRedisApplied(t *testing.T) {
	const ttl = 1500 * time.Millisecond // first renewal at 500ms
	cases := []struct {
		name         string
		short        time.Duration // the Refresh's TTL
		renewalReply time.Duration // how late the renewal's reply comes
	}{
		{"renewal answers after the refresh's validity", 150 * time.Millisecond, 500 * time.Millisecond},
		{"renewal answers within the refresh's validity", 400 * time.Millisecond, 200 * time.Millisecond},
	}
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, c := range cases {
			for _, mode := range timedModes() {
				t.Run(c.name+"/"+string(mode), func(t *testing.T) {
					ctx := context.Background()
					// The renewals' replies (to ttl) come late; the
					// Refresh's (to c.short) at once.
					slowRenewal := newDelayHook(isRefreshTo(t, ttl), false, c.renewalReply)
					a := hookedLocker(t, r, mode, slowRenewal, allNodes(mode)...)
					b := newLocker(t, r, mode)
					key := r.Key("race-" + string(mode))
					l, err := a.TryLock(ctx, key, ttl)
					if err != nil {
						t.Fatalf("TryLock: %v", err)
					}
					defer func() { _ = l.Release(ctx) }()

					select {
					case <-slowRenewal.first: // the first renewal ran; its reply is delayed
					case <-time.After(5 * time.Second):
						t.Fatal("no watchdog renewal within 5s")
					}
					testenv.WaitFor(t, 5*time.Second, "the first renewal run on every node",
						func() bool { return slowRenewal.hits.Load() >= int64(len(allNodes(mode))) })
					if err := l.Refresh(ctx, c.short); err != nil {
						t.Fatalf("Refresh(%v) = %v", c.short, err)
					}

					lb, taken := pollTake(t, b, key, time.Second)
					if lb == nil {
						if err := l.Context().Err(); err != nil {
							t.Errorf("first context ended (%v) though nobody else got the key", context.Cause(l.Context()))
						}
						return
					}
					defer func() { _ = lb.Release(ctx) }()
					ended := endedBy(l.Context(), 3*time.Second)
					t.Logf("second locker got the key; first context ended %v after that: %v",
						lateBy(ended, taken, 3*time.Second), context.Cause(l.Context()))
					if ended.IsZero() || ended.Sub(taken) > 100*time.Millisecond {
						t.Errorf("second locker took the key, yet the first handle's context was still live %v later (want it ended by then, 100ms of slack)",
							lateBy(ended, taken, 3*time.Second))
					}
				})
			}
		}
	})
}

// A Refresh to a shorter TTL that reaches Redis but whose reply comes
// too late for its ctx must not leave Context live after the key expired.
func TestFailedShorterRefreshEndsContextInTime(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range timedModes() {
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
				// handle's work must have been stopped. Unrenewed, the key
				// is gone after short: a second of tries, over three times
				// that, is where another locker would get it.
				ol, at := pollTake(t, other, key, time.Second)
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

// A Refresh whose own context ends (cancelled before the call, or its
// deadline passing while Redis is slow) says so and leaves the lock alone:
// the error wraps the context's error, not ErrNotHeld, the handle's context
// stays live, and the lock can still be refreshed and released.
func TestRefreshWithEndedContextKeepsLock(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				slow := newDelayHook(isRefresh(t), false, 0)
				a := hookedLocker(t, r, mode, slow, allNodes(mode)...)
				key := r.Key("refresh-ctx-" + string(mode))
				l, err := a.TryLock(ctx, key, 3*time.Second)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}

				cctx, cancel := context.WithCancel(ctx)
				cancel()
				err = l.Refresh(cctx, 3*time.Second)
				if !errors.Is(err, context.Canceled) || errors.Is(err, dlock.ErrNotHeld) {
					t.Errorf("Refresh with a cancelled ctx = %v, want an error wrapping context.Canceled and not ErrNotHeld", err)
				}
				if err := l.Context().Err(); err != nil {
					t.Errorf("handle's context ended after a Refresh with a cancelled ctx: %v", context.Cause(l.Context()))
				}

				slow.delay.Store(int64(300 * time.Millisecond))
				dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
				err = l.Refresh(dctx, 3*time.Second)
				cancel()
				slow.delay.Store(0)
				if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, dlock.ErrNotHeld) {
					t.Errorf("Refresh past its ctx's deadline = %v, want an error wrapping context.DeadlineExceeded and not ErrNotHeld", err)
				}
				if err := l.Context().Err(); err != nil {
					t.Errorf("handle's context ended after a Refresh past its ctx's deadline: %v", context.Cause(l.Context()))
				}

				if _, err := newLocker(t, r, mode).TryLock(ctx, key, time.Second); !errors.Is(err, dlock.ErrNotObtained) {
					t.Errorf("another locker's TryLock = %v, want ErrNotObtained (still held)", err)
				}
				if err := l.Refresh(ctx, 3*time.Second); err != nil {
					t.Errorf("Refresh with a live ctx afterwards = %v", err)
				}
				if err := l.Release(ctx); err != nil {
					t.Errorf("Release = %v", err)
				}
			})
		}
	})
}

// A refresh that was on the wire when its holder released, and lands after
// another holder took the key, must not touch the new holder's key: not
// the watchdog's renewal (Release waits for it only until its context is
// cancelled) and not a caller's Refresh. The stale refresh asks for a
// short TTL; the new holder's key must keep its own.
func TestRefreshLandingAfterReleaseLeavesNextHolder(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			for _, who := range []string{"watchdog", "Refresh"} {
				t.Run(string(mode)+"/"+who, func(t *testing.T) {
					ctx := context.Background()
					key := r.Key("late-refresh-" + string(mode) + who)
					late := newLateLanding(isRefresh(t))
					cs := clients(t, r)
					for _, i := range allNodes(mode) {
						cs[i].AddHook(late) // one refresh held, on one node
					}
					a, err := dlock.New(mode, cs)
					if err != nil {
						t.Fatal(err)
					}
					defer func() { _ = a.Close() }()
					const ttl = 600 * time.Millisecond
					l, err := a.TryLock(ctx, key, ttl)
					if err != nil {
						t.Fatal(err)
					}
					refreshed := make(chan error, 1)
					if who == "Refresh" {
						go func() { refreshed <- l.Refresh(ctx, 300*time.Millisecond) }()
					}
					<-late.sent // the watchdog's renewal is due at ttl/3
					released := make(chan error, 1)
					go func() { released <- l.Release(ctx) }()
					select {
					case err := <-released:
						if err != nil {
							t.Fatalf("Release: %v", err)
						}
					case <-time.After(5 * time.Second):
						close(late.gate)
						t.Fatalf("Release hung behind a refresh on the wire")
					}
					b := newLocker(t, r, mode)
					cur, err := b.TryLock(ctx, key, 30*time.Second)
					if err != nil {
						close(late.gate)
						t.Fatalf("B: TryLock after A's Release: %v", err)
					}
					defer func() { _ = cur.Release(ctx) }()
					close(late.gate)
					<-late.landed
					for i, c := range lockNodes(r, mode) {
						if pttl, err := c.PTTL(ctx, key).Result(); err == nil && pttl < 10*time.Second && pttl != -2 {
							t.Errorf("node %d: B's key has a PTTL of %v after A's stale refresh landed, want B's 30s", i, pttl)
						}
					}
					if who == "Refresh" && mode != dlock.ModeRedlock { // Redlock's Refresh had a majority before the Release
						if err := <-refreshed; err == nil {
							t.Errorf("A's Refresh that landed after B took the key = nil, want an error")
						}
					}
				})
			}
		}
	})
}
