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

// HoldRenewals stalls the watchdog: a hold past the validity loses the
// lock as a stalled network would, a shorter one only delays the renewals.
func TestHoldRenewals(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		for _, mode := range timedModes() {
			t.Run(string(mode)+"/past the validity", func(t *testing.T) {
				key := r.Key("held-back-" + string(mode))
				ttl := 100 * time.Millisecond
				holder, other := newLocker(t, r, mode), newLocker(t, r, mode)
				l, err := holder.TryLock(ctx, key, ttl)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				l.HoldRenewals(3 * ttl)
				l.HoldRenewals(time.Millisecond) // never shortens the hold

				for _, node := range lockNodes(r, mode) {
					waitGone(t, node, key, 3*ttl)
				}
				lo, err := other.TryLock(ctx, key, 5*time.Second)
				if err != nil {
					t.Fatalf("TryLock by another process once the key expired: %v", err)
				}
				select {
				case <-l.Context().Done():
				case <-time.After(10 * ttl):
					t.Fatalf("work context still live %v after the key expired", 10*ttl)
				}
				cause := context.Cause(l.Context())
				if !errors.Is(cause, dlock.ErrNotHeld) || !strings.Contains(cause.Error(), "held back") {
					t.Errorf("context.Cause = %v, want ErrNotHeld, saying renewals were held back", cause)
				}
				if err := l.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
					t.Errorf("Release of the lost lock = %v, want ErrNotHeld", err)
				}
				if holding, of := tokenOn(t, r, mode, key, lo.Token()); holding < of/2+1 {
					t.Errorf("the new holder's token is on %d of %d nodes after the stale release, want a majority", holding, of)
				}
				if err := lo.Release(ctx); err != nil {
					t.Errorf("new holder: Release = %v", err)
				}
			})

			t.Run(string(mode)+"/within the validity", func(t *testing.T) {
				key := r.Key("held-briefly-" + string(mode))
				ttl := 300 * time.Millisecond
				holder, other := newLocker(t, r, mode), newLocker(t, r, mode)
				l, err := holder.TryLock(ctx, key, ttl)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				// Held over the renewals due at ttl/3 and after: without
				// them the key's TTL runs down below ttl/2.
				hold := 2 * ttl / 3
				l.HoldRenewals(hold)
				node := lockNodes(r, mode)[0]
				lowest := ttl
				for end := time.Now().Add(hold); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
					pttl, err := node.PTTL(ctx, key).Result()
					if err != nil {
						t.Fatalf("PTTL: %v", err)
					}
					lowest = min(lowest, pttl)
				}
				if lowest >= ttl/2 {
					t.Errorf("lowest PTTL during the hold = %v, want under %v: renewals went on", lowest, ttl/2)
				}
				for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(ttl / 5) {
					if err := l.Context().Err(); err != nil {
						t.Fatalf("work context ended after a hold within the validity: %v", context.Cause(l.Context()))
					}
					if _, err := other.TryLock(ctx, key, ttl); !errors.Is(err, dlock.ErrNotObtained) {
						t.Fatalf("TryLock by another process after the hold = %v, want ErrNotObtained", err)
					}
				}
				if err := l.Release(ctx); err != nil {
					t.Errorf("Release = %v", err)
				}
			})
		}

		t.Run("nothing to hold", func(t *testing.T) {
			// A TTL a loaded machine's scheduler cannot outlast: the lua
			// lock must outlive it by its watchdog alone.
			ttl := time.Second
			for _, mode := range []dlock.Mode{dlock.ModeOff, dlock.ModeNaive, dlock.ModeLua} {
				l, err := newLocker(t, r, mode).TryLock(ctx, r.Key("unheld-"+string(mode)), ttl)
				if err != nil {
					t.Fatalf("%s: TryLock: %v", mode, err)
				}
				if mode == dlock.ModeLua {
					l.HoldRenewals(0) // d <= 0: no hold
					l.HoldRenewals(-time.Second)
					time.Sleep(3 * ttl)
				} else {
					l.HoldRenewals(time.Second) // no watchdog: nothing to hold
				}
				if err := l.Context().Err(); err != nil {
					t.Errorf("%s: work context ended: %v", mode, context.Cause(l.Context()))
				}
				if err := l.Release(ctx); err != nil {
					t.Errorf("%s: Release = %v", mode, err)
				}
			}
		})
	})
}
