package etcdlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

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
