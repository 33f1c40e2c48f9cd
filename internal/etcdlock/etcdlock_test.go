package etcdlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// The basics: one holder at a time, the fence grows with every grant and
// the epoch stays, a released lock is free again, a second release is
// ErrNotHeld.
func TestEtcdLock(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := c.Key("basics")
		a, b := etcdLocker(t, c), etcdLocker(t, c)
		la, err := a.TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		if _, err := b.TryLock(ctx, key, time.Second); !errors.Is(err, dlock.ErrNotObtained) {
			t.Fatalf("TryLock while held = %v, want ErrNotObtained", err)
		}
		if _, err := b.Lock(ctx, key, time.Second, 50*time.Millisecond); !errors.Is(err, dlock.ErrTimeout) {
			t.Fatalf("Lock while held = %v, want ErrTimeout", err)
		}
		if err := la.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if err := la.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
			t.Errorf("second Release = %v, want ErrNotHeld", err)
		}
		if la.Context().Err() == nil {
			t.Error("Context still live after Release")
		}
		lb, err := b.Lock(ctx, key, time.Second, time.Second)
		if err != nil {
			t.Fatalf("Lock after the release: %v", err)
		}
		defer lb.Release(ctx)
		if la.Fence() <= 0 || lb.Fence() <= la.Fence() {
			t.Errorf("fences %d then %d, want positive and growing", la.Fence(), lb.Fence())
		}
		if la.Epoch() <= 0 || lb.Epoch() != la.Epoch() {
			t.Errorf("epochs %d then %d, want the cluster's one positive epoch", la.Epoch(), lb.Epoch())
		}
	})
}

// A holder whose keep-alives stop loses its lease: its Context is
// cancelled with ErrNotHeld, the next waiter gets the lock with a larger
// fence, and the stale holder's release is ErrNotHeld.
func TestEtcdLeaseRunsOut(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := c.Key("lease")
		stale, err := etcdLocker(t, c).TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		stale.HoldRenewals(10 * time.Second) // its network stalls
		start := time.Now()
		next, err := etcdLocker(t, c).Lock(ctx, key, time.Second, 10*time.Second)
		if err != nil {
			t.Fatalf("Lock behind the stalled holder: %v", err)
		}
		defer next.Release(ctx)
		t.Logf("the next holder waited %v", time.Since(start))
		select {
		case <-stale.Context().Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the stale holder's Context is still live")
		}
		if cause := context.Cause(stale.Context()); !errors.Is(cause, dlock.ErrNotHeld) {
			t.Errorf("cause = %v, want ErrNotHeld", cause)
		}
		if next.Fence() <= stale.Fence() {
			t.Errorf("next fence %d, stale %d: want larger", next.Fence(), stale.Fence())
		}
		if err := stale.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
			t.Errorf("stale Release = %v, want ErrNotHeld", err)
		}
		if _, err := etcdLocker(t, c).TryLock(ctx, key, time.Second); !errors.Is(err, dlock.ErrNotObtained) {
			t.Errorf("TryLock after the stale release = %v, want ErrNotObtained: it freed the next holder's lock", err)
		}
	})
}

// Mutual exclusion under contention: goroutines in three processes take
// the key in turn and never overlap, and no goroutine is left behind.
func TestEtcdMutualExclusion(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := c.Key("mutex")
		lockers := []*etcdlock.Locker{etcdLocker(t, c), etcdLocker(t, c), etcdLocker(t, c)}
		var inside, overlaps, served int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range 24 {
			wg.Go(func() {
				l, err := lockers[i%3].Lock(ctx, key, time.Second, 20*time.Second)
				if err != nil {
					t.Errorf("Lock: %v", err)
					return
				}
				mu.Lock()
				inside++
				if inside > 1 {
					overlaps++
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				inside--
				served++
				mu.Unlock()
				if err := l.Release(ctx); err != nil {
					t.Errorf("Release: %v", err)
				}
			})
		}
		wg.Wait()
		if overlaps > 0 || served != 24 {
			t.Errorf("%d overlaps, %d of 24 served", overlaps, served)
		}
		left := func() (locks, watches int) {
			return lockGoroutines(), goroutinesIn("clientv3.(*watchGrpcStream)")
		}
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if d, w := left(); d == 0 && w == 0 {
				break
			}
		}
		if d, w := left(); d > 0 || w > 0 {
			t.Errorf("left behind: %d goroutines in etcdlock and dlock, %d watch streams", d, w)
		}
	})
}
