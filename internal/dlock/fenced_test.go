package dlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Every grant of a key gets a larger fence than the grants before it,
// whichever process took it and however; a refusal mints none; the other
// Redis modes mint none at all, and no Redis mode has an epoch.
func TestFence(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()

		t.Run("increases", func(t *testing.T) {
			key := r.Key("fenced")
			a, b := newLocker(t, r, dlock.ModeFenced), newLocker(t, r, dlock.ModeFenced)
			var fences []int64
			take := func(who string, l *dlock.Lock, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", who, err)
				}
				fences = append(fences, l.Fence())
				if err := l.Release(ctx); err != nil {
					t.Fatalf("%s: Release = %v", who, err)
				}
			}
			l, err := a.TryLock(ctx, key, time.Second)
			take("A: TryLock", l, err)
			l, err = b.TryLock(ctx, key, time.Second)
			take("B: TryLock", l, err)
			l, err = b.Lock(ctx, key, time.Second, time.Second)
			take("B: Lock", l, err)
			l, err = a.Lock(ctx, key, time.Second, time.Second)
			take("A: Lock", l, err)

			// A waits for B's release, and is handed the key by it.
			held, err := b.TryLock(ctx, key, time.Second)
			if err != nil {
				t.Fatalf("B: TryLock: %v", err)
			}
			fences = append(fences, held.Fence())
			got := lockLater(ctx, a, key, time.Second, 5*time.Second)
			waitQueued(t, a, key, 1)
			if err := held.Release(ctx); err != nil {
				t.Fatalf("B: Release = %v", err)
			}
			w := <-got
			take("A: Lock after waiting", w.l, w.err)

			if fences[0] < 1 {
				t.Errorf("first fence = %d, want at least 1", fences[0])
			}
			for i := 1; i < len(fences); i++ {
				if fences[i] <= fences[i-1] {
					t.Errorf("fences = %v, want each above the one before", fences)
					break
				}
			}
		})

		t.Run("refusal mints nothing", func(t *testing.T) {
			key := r.Key("fenced-refused")
			holder, other := newLocker(t, r, dlock.ModeFenced), newLocker(t, r, dlock.ModeFenced)
			l, err := holder.TryLock(ctx, key, time.Second)
			if err != nil {
				t.Fatalf("TryLock: %v", err)
			}
			if _, err := other.TryLock(ctx, key, time.Second); !errors.Is(err, dlock.ErrNotObtained) {
				t.Fatalf("TryLock of a held key = %v, want ErrNotObtained", err)
			}
			if _, err := other.Lock(ctx, key, time.Second, 0); !errors.Is(err, dlock.ErrTimeout) {
				t.Fatalf("Lock without waiting, of a held key = %v, want ErrTimeout", err)
			}
			counter, err := lockNodes(r, dlock.ModeFenced)[0].Get(ctx, key+":fence").Int64()
			if err != nil {
				t.Fatalf("GET the fence counter: %v", err)
			}
			if counter != l.Fence() {
				t.Errorf("fence counter after two refusals = %d, want %d, the holder's fence", counter, l.Fence())
			}
			if err := l.Release(ctx); err != nil {
				t.Fatalf("Release = %v", err)
			}
			next, err := other.TryLock(ctx, key, time.Second)
			if err != nil {
				t.Fatalf("TryLock after the release: %v", err)
			}
			if got, want := next.Fence(), l.Fence()+1; got != want {
				t.Errorf("next grant's fence = %d, want %d", got, want)
			}
			_ = next.Release(ctx)
		})

		t.Run("other modes", func(t *testing.T) {
			for _, mode := range []dlock.Mode{dlock.ModeOff, dlock.ModeNaive, dlock.ModeLua, dlock.ModeRedlock} {
				l, err := newLocker(t, r, mode).TryLock(ctx, r.Key("unfenced-"+string(mode)), time.Second)
				if err != nil {
					t.Fatalf("%s: TryLock: %v", mode, err)
				}
				if got := l.Fence(); got != 0 {
					t.Errorf("%s: Fence = %d, want 0", mode, got)
				}
				_ = l.Release(ctx)
			}
		})

		t.Run("no epoch", func(t *testing.T) {
			for _, mode := range dlock.Modes() {
				l, err := newLocker(t, r, mode).TryLock(ctx, r.Key("epoch-"+string(mode)), time.Second)
				if err != nil {
					t.Fatalf("%s: TryLock: %v", mode, err)
				}
				if got := l.Epoch(); got != 0 {
					t.Errorf("%s: Epoch = %d, want 0", mode, got)
				}
				_ = l.Release(ctx)
			}
		})
	})
}

// Fences are handed out in grant order: with several processes and
// goroutines contending, and leases running out under the holders now and
// then (some holders stall), the fences seen inside the lock, in the order
// the holders entered it, only increase.
func TestFencesIncreaseInGrantOrder(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("fence-order")
		var lockers []dlock.Locker
		for range 3 {
			lockers = append(lockers, newLocker(t, r, dlock.ModeFenced))
		}
		var mu sync.Mutex
		var seen []int64
		var wg sync.WaitGroup
		for g := range 9 {
			wg.Go(func() {
				for i := range 15 {
					l, err := lockers[g%3].Lock(ctx, key, 100*time.Millisecond, 10*time.Second)
					if err != nil {
						t.Errorf("Lock: %v", err)
						return
					}
					mu.Lock() // inside the lock: entries in grant order
					seen = append(seen, l.Fence())
					mu.Unlock()
					if i%5 == 4 { // this holder stalls: its lease runs out under it
						l.HoldRenewals(time.Minute)
						<-l.Context().Done()
					}
					_ = l.Release(ctx)
				}
			})
		}
		wg.Wait()
		for i := 1; i < len(seen); i++ {
			if seen[i] <= seen[i-1] {
				t.Errorf("entry %d into the lock carried fence %d after fence %d: fences out of grant order", i, seen[i], seen[i-1])
			}
		}
	})
}
