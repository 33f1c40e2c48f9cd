package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/testenv"
)

// etcdLocker returns an etcd locker on a fresh client, as another process
// would have.
func etcdLocker(t *testing.T, c *testenv.EtcdCluster) *dlock.Etcd {
	t.Helper()
	return dlock.NewEtcd(c.Client())
}

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

// A waiter is woken by the release, not by polling, and waiters are
// served in the order they queued, across processes.
func TestEtcdWaitersInOrder(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := c.Key("fifo")
		holder := etcdLocker(t, c)
		first, err := holder.TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		const waiters = 5
		var (
			mu    sync.Mutex
			order []int
			wg    sync.WaitGroup
		)
		for i := range waiters {
			locker := etcdLocker(t, c) // each its own process
			wg.Go(func() {
				l, err := locker.Lock(ctx, key, time.Second, 10*time.Second)
				if err != nil {
					t.Errorf("waiter %d: %v", i, err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				if err := l.Release(ctx); err != nil {
					t.Errorf("waiter %d: Release: %v", i, err)
				}
			})
			waitQueued(t, c, key, i+2) // queued behind the holder and the waiters before it
		}
		released := time.Now()
		if err := first.Release(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if took := time.Since(released); took > 2*time.Second {
			t.Errorf("five waiters took %v after the release: woken late", took)
		}
		want := []int{0, 1, 2, 3, 4}
		if fmt.Sprint(order) != fmt.Sprint(want) {
			t.Errorf("served in order %v, want %v", order, want)
		}
	})
}

// waitQueued waits until n keys are queued on key.
func waitQueued(t *testing.T, c *testenv.EtcdCluster, key string, n int) {
	t.Helper()
	cl := c.Client()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		resp, err := cl.Get(context.Background(), key+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil && resp.Count >= int64(n) {
			return
		}
	}
	t.Fatalf("%d keys not queued on %q within 5s", n, key)
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

// With one member of three down the lock works; with two, Lock answers
// ErrUnavailable within its wait and leaves nothing behind; once a member
// is back, it works again.
func TestEtcdQuorum(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := c.Key("quorum")
		c.Reserve()
		m := etcdLocker(t, c)
		c.Stop(0)
		l, err := m.Lock(ctx, key, time.Second, 5*time.Second)
		if err != nil {
			t.Fatalf("one of three down: %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatalf("one of three down: Release: %v", err)
		}
		c.Stop(1)
		wait := 500 * time.Millisecond
		start := time.Now()
		_, err = m.Lock(ctx, key, time.Second, wait)
		if !errors.Is(err, dlock.ErrUnavailable) {
			t.Errorf("two of three down: Lock = %v, want ErrUnavailable", err)
		}
		if took := time.Since(start); took > wait+time.Second {
			t.Errorf("two of three down: Lock took %v, wait %v", took, wait)
		}
		c.Start(1)
		l, err = m.Lock(ctx, key, time.Second, 5*time.Second)
		if err != nil {
			t.Fatalf("quorum back: %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("quorum back: Release: %v", err)
		}
		c.Start(0)
	})
}

// Mutual exclusion under contention: goroutines in three processes take
// the key in turn and never overlap, and no goroutine is left behind.
func TestEtcdMutualExclusion(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := c.Key("mutex")
		lockers := []*dlock.Etcd{etcdLocker(t, c), etcdLocker(t, c), etcdLocker(t, c)}
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
		left := func() (dlock, watches int) {
			return dlockGoroutines(), goroutinesIn("clientv3.(*watchGrpcStream)")
		}
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if d, w := left(); d == 0 && w == 0 {
				break
			}
		}
		if d, w := left(); d > 0 || w > 0 {
			t.Errorf("left behind: %d goroutines in dlock, %d watch streams", d, w)
		}
	})
}

// A waiter whose lease is revoked behind its back (or runs out while its
// keep-alives cannot get through) has lost its place, not its wait: it
// queues again at once, with a new lease, and gets the lock when the
// holder lets go.
func TestEtcdWaiterLosesItsLease(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := c.Key("requeue")
		held, err := etcdLocker(t, c).TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := lockLater(ctx, etcdLocker(t, c), key, time.Second, 10*time.Second)
		waitQueued(t, c, key, 2)

		cl := c.Client()
		resp, err := cl.Get(ctx, key+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
		if err != nil || len(resp.Kvs) != 2 {
			t.Fatalf("queue: %v, %v", resp, err)
		}
		waiter := resp.Kvs[1]
		if _, err := cl.Revoke(ctx, clientv3.LeaseID(waiter.Lease)); err != nil {
			t.Fatal(err)
		}
		requeued := false
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && !requeued; time.Sleep(10 * time.Millisecond) {
			r, err := cl.Get(ctx, key+"/", clientv3.WithPrefix())
			requeued = err == nil && len(r.Kvs) == 2 && string(r.Kvs[0].Key) != string(waiter.Key) && string(r.Kvs[1].Key) != string(waiter.Key)
		}
		if !requeued {
			t.Error("the waiter did not queue again within 3s of losing its lease")
		}
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
		a := <-got
		if a.err != nil {
			t.Fatalf("the waiter, after the holder let go: %v", a.err)
		}
		a.l.Release(ctx)
	})
}

// Nothing is left behind by a TryLock that found the lock held, nor by a
// Lock whose caller gave up while queued: their keys leave the queue and
// their leases are revoked at once, not when they run out.
func TestEtcdGivingUpLeavesNothing(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := c.Key("give-up")
		cl := c.Client()
		leasesBefore := leaseCount(t, c)
		held, err := etcdLocker(t, c).TryLock(ctx, key, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := etcdLocker(t, c).TryLock(ctx, key, 5*time.Second); !errors.Is(err, dlock.ErrNotObtained) {
			t.Fatalf("TryLock while held = %v, want ErrNotObtained", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		got := lockLater(cctx, etcdLocker(t, c), key, 5*time.Second, time.Minute)
		waitQueued(t, c, key, 2)
		cancel()
		a := <-got
		if !errors.Is(a.err, dlock.ErrTimeout) || !errors.Is(a.err, context.Canceled) {
			t.Errorf("Lock whose caller gave up = %v, want ErrTimeout wrapping context.Canceled", a.err)
		}
		resp, err := cl.Get(ctx, key+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil || resp.Count != 1 {
			t.Errorf("queue after the two gave up: %v keys (%v), want the holder's alone", resp.Count, err)
		}
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
		// Other tests' leases may come and go on a shared real cluster:
		// count only on the embedded one, which is this test's own.
		if c.Mode() == testenv.Embedded {
			if n := leaseCount(t, c); n != leasesBefore {
				t.Errorf("%d leases after every acquisition let go, %d before", n, leasesBefore)
			}
		}
	})
}

// leaseCount returns how many leases the cluster holds, as its leader
// says: a follower's list of leases is not linearizable, and under load it
// can still show a lease whose revoke it has applied.
func leaseCount(t *testing.T, c *testenv.EtcdCluster) int {
	t.Helper()
	ctx := context.Background()
	cl := c.Client()
	for _, ep := range c.Endpoints() {
		st, err := cl.Status(ctx, ep)
		if err != nil || st.Leader != st.Header.MemberId {
			continue
		}
		leader, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("client on the leader %s: %v", ep, err)
		}
		defer leader.Close()
		resp, err := leader.Leases(ctx)
		if err != nil {
			t.Fatalf("Leases: %v", err)
		}
		return len(resp.Leases)
	}
	t.Fatalf("no member of %v says it leads", c.Endpoints())
	return 0
}

// TryLock on a cluster that has lost its quorum gives up after a few tries
// with ErrUnavailable, even when its context has no deadline.
func TestEtcdTryLockWithoutQuorum(t *testing.T) {
	c := testenv.NewEtcd(t, testenv.Embedded)
	m := etcdLocker(t, c)
	c.Stop(0)
	c.Stop(1)
	start := time.Now()
	_, err := m.TryLock(context.Background(), c.Key("no-quorum"), time.Second)
	if !errors.Is(err, dlock.ErrUnavailable) {
		t.Errorf("TryLock without a quorum = %v, want ErrUnavailable", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("TryLock without a quorum took %v", took)
	}
}
