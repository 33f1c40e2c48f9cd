package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// A holder that stalled past its TTL cannot release (or refresh) the lock
// the next holder took meanwhile.
func TestOwnership(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range timedModes() {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("owned-" + string(mode))
				a, b, c := newLocker(t, r, mode), newLocker(t, r, mode), newLocker(t, r, mode)

				// A stalls: its context ends, so its watchdog stops, and its
				// lock runs out while A still holds the handle.
				actx, stall := context.WithCancel(ctx)
				la, err := a.TryLock(actx, key, 300*time.Millisecond)
				if err != nil {
					t.Fatalf("A: TryLock: %v", err)
				}
				stall()
				lb, err := b.Lock(ctx, key, 5*time.Second, 5*time.Second)
				if err != nil {
					t.Fatalf("B: Lock: %v", err)
				}

				if err := la.Refresh(ctx, time.Second); !errors.Is(err, dlock.ErrNotHeld) {
					t.Errorf("A: Refresh of a lock B holds = %v, want ErrNotHeld", err)
				}
				if err := la.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
					t.Errorf("A: Release of a lock B holds = %v, want ErrNotHeld", err)
				}
				if _, err := c.TryLock(ctx, key, time.Second); !errors.Is(err, dlock.ErrNotObtained) {
					t.Errorf("C: TryLock after A's stale release = %v, want ErrNotObtained (B still holds it)", err)
				}
				// B's token is still there: on the node (lua), on a
				// majority of the nodes (redlock).
				if holding, of := tokenOn(t, r, mode, key, lb.Token()); holding < of/2+1 {
					t.Errorf("B's token is on %d of %d nodes after A's stale release, want a majority", holding, of)
				}
				if err := lb.Release(ctx); err != nil {
					t.Errorf("B: Release = %v", err)
				}
			})
		}
	})
}

// An abandoned lock (its holder crashed: no release, no renewal) frees
// itself once its TTL runs out.
func TestExpiry(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeNaive, dlock.ModeLua, dlock.ModeRedlock, dlock.ModeFenced} {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("abandoned-" + string(mode))
				ttl := 300 * time.Millisecond
				crashed, other := newLocker(t, r, mode), newLocker(t, r, mode)

				cctx, crash := context.WithCancel(ctx)
				if _, err := crashed.TryLock(cctx, key, ttl); err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				taken := time.Now()
				crash() // the watchdog (lua, redlock, fenced) stops with the context

				if _, err := other.TryLock(ctx, key, ttl); !errors.Is(err, dlock.ErrNotObtained) {
					t.Fatalf("TryLock right after = %v, want ErrNotObtained", err)
				}
				l, err := other.Lock(ctx, key, ttl, 5*time.Second)
				if err != nil {
					t.Fatalf("Lock after the holder vanished = %v, want the lock once its TTL ran out", err)
				}
				// Less than the TTL would mean the lock did not protect anything.
				if held := time.Since(taken); held < ttl/2 {
					t.Errorf("abandoned lock was free after %v, want about its TTL %v", held, ttl)
				}
				if err := l.Release(ctx); err != nil {
					t.Errorf("Release = %v", err)
				}
			})
		}
	})
}

// A handle releases once, refreshes only while held, and ends its context
// on release.
func TestHandle(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range dlock.Modes() {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("handle-" + string(mode))
				l, err := newLocker(t, r, mode).TryLock(ctx, key, time.Second)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				if l.Key() != key {
					t.Errorf("Key = %q, want %q", l.Key(), key)
				}
				if v := l.Validity(); v <= 0 || v > time.Second {
					t.Errorf("Validity = %v, want in (0, 1s]", v)
				}
				if mode != dlock.ModeOff && mode != dlock.ModeNaive {
					if err := l.Refresh(ctx, 2*time.Second); err != nil {
						t.Errorf("Refresh = %v", err)
					}
					if v := l.Validity(); v <= time.Second {
						t.Errorf("Validity after Refresh(2s) = %v, want over 1s", v)
					}
				}
				if err := l.Release(ctx); err != nil {
					t.Fatalf("Release = %v", err)
				}
				if l.Context().Err() == nil {
					t.Error("Context still live after Release")
				}
				if err := l.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
					t.Errorf("second Release = %v, want ErrNotHeld", err)
				}
				if err := l.Refresh(ctx, time.Second); !errors.Is(err, dlock.ErrNotHeld) {
					t.Errorf("Refresh after Release = %v, want ErrNotHeld", err)
				}
			})
		}
	})
}

// Off never blocks and never fails: two holders at once is its lesson.
func TestOffNeverBlocks(t *testing.T) {
	ctx := context.Background()
	off := dlock.NewOff()
	a, err := off.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatalf("TryLock = %v", err)
	}
	b, err := off.Lock(ctx, "k", time.Second, 0)
	if err != nil {
		t.Fatalf("Lock while a holds the key = %v, want nil", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Errorf("Release = %v", err)
	}
	if err := b.Release(ctx); err != nil {
		t.Errorf("Release = %v", err)
	}
}

// A release by a handle whose lease ran out and was granted to another
// holder leaves the new holder's key alone, for a handle got by TryLock
// and for one got by waiting (whose release goes through the waiting
// room's quiet release and turns).
func TestStaleReleaseKeepsNewHoldersKey(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			for _, waited := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/waited=%v", mode, waited), func(t *testing.T) {
					ctx := context.Background()
					key := r.Key(fmt.Sprintf("stale-%s-%v", mode, waited))
					a, b := newLocker(t, r, mode), newLocker(t, r, mode)
					const ttl = 200 * time.Millisecond
					var old *dlock.Lock
					var err error
					if waited {
						old, err = dlock.InTurns(a).Lock(ctx, key, ttl, time.Second)
					} else {
						old, err = a.TryLock(ctx, key, ttl)
					}
					if err != nil {
						t.Fatalf("A: %v", err)
					}
					old.HoldRenewals(time.Minute) // A's network stalls: its lease runs out
					<-old.Context().Done()
					var cur *dlock.Lock
					testenv.WaitFor(t, 5*time.Second, "B to take the key after A's lease ran out", func() bool {
						cur, err = b.TryLock(ctx, key, 5*time.Second)
						return err == nil
					})
					defer func() { _ = cur.Release(ctx) }()
					if err := old.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
						t.Errorf("A's Release after B took the key = %v, want ErrNotHeld", err)
					}
					if n, of := tokenOn(t, r, mode, key, cur.Token()); n <= of/2 {
						t.Errorf("after A's stale Release, B's token is on %d of %d nodes, want a majority", n, of)
					}
					if _, err := newLocker(t, r, mode).TryLock(ctx, key, time.Second); !errors.Is(err, dlock.ErrNotObtained) {
						t.Errorf("a third TryLock while B holds the key = %v, want ErrNotObtained", err)
					}
				})
			}
		}
	})
}
