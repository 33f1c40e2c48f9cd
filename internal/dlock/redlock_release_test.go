package dlock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// A Redlock release while one node of five is slow is heard by the other
// process's waiter at once, well before its 1s fallback: a release that
// is not quiet by each node's script, and a quiet one (its holder got the
// key by waiting, in the middle of its run: the fairness rule) by the
// waiting room, as soon as a majority released it, publishing on every
// node at once, so that the slow node does not hold back the others.
func TestRedlockReleaseWithASlowNodeIsHeard(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, quiet := range []bool{false, true} {
			t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key(fmt.Sprintf("slow-node-release-%v", quiet))
				const ttl = 30 * time.Second
				a := newLocker(t, r, dlock.ModeRedlock)
				tries := &countHits{match: isAcquire}
				cs := clients(t, r)
				cs[1].AddHook(tries)
				b := dlock.NewRedlock(cs)
				defer func() { _ = b.Close() }()

				var held *dlock.Lock
				if quiet {
					// A waits for B's key, so that A listens to it; then A
					// holds it, got by waiting, the first of its run: its
					// release is quiet.
					first, err := b.TryLock(ctx, key, ttl)
					if err != nil {
						t.Fatal(err)
					}
					gotA := lockLater(ctx, a, key, ttl, 10*time.Second)
					waitHears(t, a, key)
					if err := first.Release(ctx); err != nil {
						t.Fatal(err)
					}
					wa := <-gotA
					if wa.err != nil {
						t.Fatalf("A: Lock: %v", wa.err)
					}
					held = wa.l
				} else {
					var err error
					if held, err = a.TryLock(ctx, key, ttl); err != nil { // a TryLock's release is always announced
						t.Fatal(err)
					}
				}
				// B waits for it, hears its releases, and has just been
				// refused (its fallback is a second away).
				gotB := lockLater(ctx, b, key, ttl, 20*time.Second)
				waitHears(t, b, key)
				n := tries.hits.Load()
				testenv.WaitFor(t, 3*time.Second, "B's head to try again", func() bool { return tries.hits.Load() > n })
				refused := time.Unix(0, tries.last.Load())

				r.SetDelay(0, 1500*time.Millisecond)
				released := time.Now()
				go func() { _ = held.Release(ctx) }()
				wb := <-gotB
				r.SetDelay(0, 0)
				if wb.err != nil {
					t.Fatalf("B: Lock: %v", wb.err)
				}
				defer func() { _ = wb.l.Release(ctx) }()
				// Without an announcement B's next try comes a second (its
				// fallback) after that refusal, which node 1's answer, counted
				// at refused, may follow by a few milliseconds; and a release
				// that waited for node 0 comes 1.5s after released.
				if took := wb.at.Sub(refused); took >= 900*time.Millisecond {
					t.Errorf("B got the key %v after its last refusal (%v after A's release began), want under 900ms, before its 1s fallback: "+
						"the release (quiet %v) with node 0 slow was not heard",
						took.Round(time.Millisecond), wb.at.Sub(released).Round(time.Millisecond), quiet)
				}
			})
		}
	})
}

// A Release right after TryLock, with one node hung for it, is a success
// once the token is off the other four: the two nodes that granted the
// acquire after its verdict (their replies come 50ms late) are the
// release's to delete. When the acquire's late undo deleted the token
// there first, the release found nothing, counted those nodes as still
// held, and waited for the hung node until the validity ran out: ErrNotHeld.
func TestRedlockReleaseRightAfterTryLockTakesTheLateGrants(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("release-late-grants")
		const ttl = 2 * time.Second
		cs := clients(t, r)
		late := newDelayHook(isAcquire, false, 50*time.Millisecond)
		cs[3].AddHook(late)
		cs[4].AddHook(late)
		cs[0].AddHook(newDelayHook(isRelease(t), true, time.Hour)) // hung: until the release gives up on it
		a := dlock.NewRedlock(cs)
		defer func() { _ = a.Close() }()

		l, err := a.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatalf("Release right after TryLock, node 0 hung, nodes 3 and 4 granting late: %v, want nil (the token is off 4 of 5)", err)
		}
		if holding, of := tokenOn(t, r, dlock.ModeRedlock, key, l.Token()); holding > 1 {
			t.Errorf("after Release the token holds %d of %d nodes, want at most the hung one", holding, of)
		}
		b := newLocker(t, r, dlock.ModeRedlock)
		l2, err := b.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatalf("another TryLock after Release: %v", err)
		}
		_ = l2.Release(ctx)
	})
}
