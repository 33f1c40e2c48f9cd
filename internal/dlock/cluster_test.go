package dlock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// The locks that use one Redis, on a Redis Cluster (NewSingle with
// go-redis's cluster client): a lock key with a hash tag, its turns and
// fence counter beside it in the same slot, and its releases announced on
// pub/sub, which a cluster carries to every node.

// TestClusterLocks: on a real Redis Cluster, naive, lua and fenced let one
// holder in at a time among two processes' goroutines, fenced's tokens
// grow, and a release wakes a waiter at once.
func TestClusterLocks(t *testing.T) {
	c := testenv.NewRedisCluster(t)
	for _, mode := range []dlock.Mode{dlock.ModeNaive, dlock.ModeLua, dlock.ModeFenced} {
		t.Run(string(mode), func(t *testing.T) {
			lockers := []dlock.Locker{clusterLocker(t, c, mode), clusterLocker(t, c, mode)}
			key := c.Key("{" + string(mode) + "}lock")
			t.Run("one holder at a time", func(t *testing.T) {
				var in, most, grants atomic.Int64
				var mu sync.Mutex
				var fences []int64
				failures := make(chan error, 20)
				var wg sync.WaitGroup
				for g := range 10 {
					l := lockers[g%2]
					wg.Go(func() {
						for range 5 {
							h, err := l.Lock(t.Context(), key, 5*time.Second, 10*time.Second)
							if err != nil {
								failures <- err
								return
							}
							n := in.Add(1)
							for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
							}
							grants.Add(1)
							mu.Lock()
							fences = append(fences, h.Fence())
							mu.Unlock()
							time.Sleep(time.Millisecond) // the critical section
							in.Add(-1)
							if err := h.Release(context.Background()); err != nil {
								failures <- err
								return
							}
						}
					})
				}
				wg.Wait()
				close(failures)
				for err := range failures {
					t.Errorf("Lock/Release: %v", err)
				}
				if got := most.Load(); got != 1 {
					t.Errorf("at most %d holders at once, want 1", got)
				}
				if got := grants.Load(); got != 50 {
					t.Errorf("%d grants, want 50", got)
				}
				if mode == dlock.ModeFenced {
					seen := map[int64]bool{}
					for _, f := range fences {
						if f <= 0 || seen[f] {
							t.Errorf("fence %d: want every grant's above 0 and its own (%v)", f, fences)
							break
						}
						seen[f] = true
					}
				}
			})
			t.Run("a release wakes the waiter", func(t *testing.T) {
				ctx := t.Context()
				held, err := lockers[0].TryLock(ctx, key, 10*time.Second)
				if err != nil {
					t.Fatalf("TryLock: %v", err)
				}
				for i := range 5 {
					got := lockLater(ctx, lockers[(i+1)%2], key, 10*time.Second, 5*time.Second)
					time.Sleep(20 * time.Millisecond) // the waiter found the key held and sleeps
					if err := held.Release(ctx); err != nil {
						t.Fatalf("hand-off %d: Release = %v", i, err)
					}
					released := time.Now()
					res := <-got
					if res.err != nil {
						t.Fatalf("hand-off %d: the waiter's Lock = %v", i, res.err)
					}
					// Unannounced, a waiter sleeps up to a second.
					within(t, "the hand-off after a release", res.at.Sub(released), 500*time.Millisecond)
					held = res.l
				}
				_ = held.Release(ctx)
			})
		})
	}
	t.Run("a key without a hash tag", func(t *testing.T) {
		// lua keeps the key's turns in "<key>:turns": without a tag, in
		// another slot, and the cluster refuses the script.
		_, err := clusterLocker(t, c, dlock.ModeLua).TryLock(t.Context(), c.Key("untagged"), time.Second)
		if !errors.Is(err, dlock.ErrUnavailable) || !strings.Contains(err.Error(), "CROSSSLOT") {
			t.Errorf("TryLock of an untagged key = %v, want ErrUnavailable saying CROSSSLOT", err)
		}
	})
}

// clusterLocker returns a locker of mode on a fresh cluster client, as
// another process would have, closed when t ends.
func clusterLocker(t *testing.T, c *testenv.RedisCluster, mode dlock.Mode) dlock.Locker {
	t.Helper()
	l, err := dlock.NewSingle(mode, c.Client())
	if err != nil {
		t.Fatalf("NewSingle(%s): %v", mode, err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}
