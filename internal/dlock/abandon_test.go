package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// TestAbandon: an abandoned lock is not renewed and not deleted. It keeps
// the next holder out until its TTL runs out, though the holder's context
// lives on; the handle's own context ends at once; and a Release after it
// is refused without touching the key.
func TestAbandon(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeLua, dlock.ModeRedlock, dlock.ModeFenced} {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background() // lives on: only Abandon stops the watchdog
				key := r.Key("abandon-" + string(mode))
				ttl := 300 * time.Millisecond
				holder, other := newLocker(t, r, mode), newLocker(t, r, mode)

				l, err := holder.TryLock(ctx, key, ttl)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				taken := time.Now()
				l.Abandon()
				if l.Context().Err() == nil {
					t.Error("the handle's context lives on after Abandon")
				}
				if _, err := other.TryLock(ctx, key, ttl); !errors.Is(err, dlock.ErrNotObtained) {
					t.Fatalf("TryLock right after Abandon = %v, want ErrNotObtained", err)
				}
				if err := l.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
					t.Errorf("Release after Abandon = %v, want ErrNotHeld", err)
				}
				next, err := other.Lock(ctx, key, ttl, 5*time.Second)
				if err != nil {
					t.Fatalf("Lock once the abandoned TTL ran out = %v", err)
				}
				if held := time.Since(taken); held < ttl/2 {
					t.Errorf("abandoned lock was free after %v, want about its TTL %v", held, ttl)
				}
				if err := next.Release(ctx); err != nil {
					t.Errorf("Release = %v", err)
				}
			})
		}
	})
}
