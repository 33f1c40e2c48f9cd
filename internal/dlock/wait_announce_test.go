package dlock_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// A process listens to a key's release announcements only while the key is
// contended: it subscribes once a waiter fails to get the key, and
// unsubscribes a little while after nobody waits any more.
func TestListensOnlyWhileContended(t *testing.T) {
	testenv.SkipShort(t, "waits for the idle unsubscribe; a latency property, not a safety one, left to the full run")
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
			testenv.WaitFor(t, within, fmt.Sprintf("%d subscribers %s", want, what), func() bool { return subscribers() == want })
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
				if d > announcedWake {
					t.Errorf("A released after its Close: B woke %v later, want within %v", d.Round(time.Millisecond), announcedWake)
				}
			})
		}
	})
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
			if d > announcedWake {
				slow++
				t.Errorf("cycle %d: waiter woke %v after the release (fallback, not the announcement)", i, d.Round(time.Millisecond))
			}
			if err := wl.Release(ctx); err != nil {
				t.Fatalf("cycle %d: waiter Release: %v", i, err)
			}
			if slow == 3 {
				break
			}
		}
	})
}

// Over many hand-offs between two redlock lockers, the waiter gets the lock
// within tens of milliseconds of the end of the holder's release (the
// median hand-off) and every time well before its fallback would have woken
// it (announcedWake), also when the release reaches some nodes a few
// milliseconds after the others (so the first announcement arrives before
// most nodes have released).
func TestRedlockHandOffWakesWaiterPromptly(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		cases := []struct {
			name     string
			delay    time.Duration // of the release on nodes 2-4, before it is sent
			handOffs int
		}{
			{"prompt release", 0, testenv.Short(40, 120)},
			{"release 5ms late on nodes 2-4", 5 * time.Millisecond, 40},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ctx := context.Background()
				ttl, median := 2*time.Second, 30*time.Millisecond
				lateRelease := newDelayHook(isRelease(t), true, c.delay)
				holder := hookedLocker(t, r, dlock.ModeRedlock, lateRelease, 2, 3, 4)
				waiter := hookedLocker(t, r, dlock.ModeRedlock, lateRelease, 2, 3, 4)
				key := r.Key("hand-off")

				l, err := holder.Lock(ctx, key, ttl, time.Second)
				if err != nil {
					t.Fatalf("Lock: %v", err)
				}
				var took []time.Duration
				for i := range c.handOffs {
					got := lockLater(ctx, waiter, key, ttl, 30*time.Second)
					waitHears(t, waiter, key)
					if err := l.Release(ctx); err != nil {
						t.Errorf("hand-off %d: Release = %v", i, err)
					}
					released := time.Now()
					res := <-got
					if res.err != nil {
						t.Fatalf("hand-off %d: waiter's Lock = %v", i, res.err)
					}
					d := res.at.Sub(released)
					took = append(took, d)
					if d > announcedWake {
						t.Fatalf("hand-off %d: the waiter got the lock %v after the release ended, want within %v: its fallback woke it",
							i, d.Round(time.Millisecond), announcedWake)
					}
					l = res.l
					holder, waiter = waiter, holder
				}
				slices.Sort(took)
				mid := took[len(took)/2]
				t.Logf("%d hand-offs after the release ended: median %v, slowest %v",
					len(took), mid.Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
				if mid > median {
					t.Errorf("median hand-off %v, want within %v", mid.Round(time.Millisecond), median)
				}
				if err := l.Release(ctx); err != nil {
					t.Errorf("last Release = %v", err)
				}
			})
		}
	})
}

// The holder releases right after the waiter's first try was refused and
// before the waiter has even asked to hear the key's releases: the
// announcement goes to nobody. The waiter must not sleep until its
// fallback (a second, with a long TTL): the subscription's confirmation
// wakes it, and it finds the key free.
func TestReleaseBeforeWaiterSubscribesIsNotLost(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("early-release-" + string(mode))
				a := newLocker(t, r, mode)
				held, err := a.TryLock(ctx, key, 30*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				var released time.Time
				hook := &afterFirst{match: isAcquire, fn: func() {
					released = time.Now()
					if err := held.Release(ctx); err != nil {
						t.Errorf("Release: %v", err)
					}
				}}
				cs := clients(t, r)
				for _, i := range allNodes(mode) {
					cs[i].AddHook(hook)
				}
				b, err := dlock.New(mode, cs)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = b.Close() }()
				l, err := b.Lock(ctx, key, 30*time.Second, 10*time.Second)
				if err != nil {
					t.Fatalf("Lock: %v", err)
				}
				defer func() { _ = l.Release(ctx) }()
				if took := time.Since(released); took > 500*time.Millisecond {
					t.Errorf("the waiter got the key %v after a release made before it subscribed, want well under its 1s fallback", took)
				}
			})
		}
	})
}
