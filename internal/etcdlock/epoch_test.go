package etcdlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// grant is what a store that checks fences keeps of a lock: its epoch and
// its fence.
type grant struct{ epoch, fence int64 }

func grantOf(l *dlock.Lock) grant { return grant{l.Epoch(), l.Fence()} }

// newer reports whether a store that orders grants by (Epoch, Fence),
// lexicographically, takes g for a later grant than old.
func (g grant) newer(old grant) bool {
	return g.epoch > old.epoch || g.epoch == old.epoch && g.fence > old.fence
}

// namespaced returns a fresh client on c whose keys, leases and watches all
// live under prefix: to the locker, an etcd cluster of its own, on which no
// lock was ever taken.
func namespaced(c *testenv.EtcdCluster, prefix string) *clientv3.Client {
	cl := c.Client()
	cl.KV = namespace.NewKV(cl.KV, prefix)
	cl.Watcher = namespace.NewWatcher(cl.Watcher, prefix)
	cl.Lease = namespace.NewLease(cl.Lease, prefix)
	return cl
}

// A cluster built after another (here: a fresh embedded cluster, whose
// revisions start again near 1; on the shared real cluster, which must not
// be wiped, a fresh namespace, whose epoch key is fresh too) grants its
// first lock with a later epoch than the other's, so that a store ordering
// grants by (Epoch, Fence) takes it for the newer grant, and the old
// cluster's holders for stale ones. Every grant of one cluster carries the
// same epoch.
func TestEtcdEpochOfARebuiltCluster(t *testing.T) {
	testenv.SkipShort(t, "starts two clusters; order's TestEtcdFenceSurvivesARebuiltCluster checks a rebuilt cluster's grants")
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := "epoch"
		// The old cluster: a few grants, so that its fences have grown.
		var old, oldAgain *clientv3.Client
		if c.Mode() == testenv.Embedded {
			old, oldAgain = c.Client(), c.Client()
		} else {
			old, oldAgain = namespaced(c, c.Key("old")+":"), namespaced(c, c.Key("old")+":")
		}
		var last grant
		for i := range 5 {
			l, err := etcdlock.New(old).TryLock(ctx, key, time.Second)
			if err != nil {
				t.Fatalf("old cluster: TryLock %d: %v", i, err)
			}
			g := grantOf(l)
			if err := l.Release(ctx); err != nil {
				t.Fatalf("old cluster: Release %d: %v", i, err)
			}
			if g.epoch <= 0 || g.epoch > time.Now().UnixMilli() {
				t.Fatalf("old cluster: grant %d has epoch %d, want unix milliseconds up to now", i, g.epoch)
			}
			if i > 0 && g.epoch != last.epoch {
				t.Errorf("old cluster: grant %d has epoch %d, grant %d had %d: want one epoch per cluster", i, g.epoch, i-1, last.epoch)
			}
			last = g
		}
		l, err := etcdlock.New(oldAgain).TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("old cluster, another process: TryLock: %v", err)
		}
		if got := l.Epoch(); got != last.epoch {
			t.Errorf("old cluster, another process: epoch %d, want the cluster's %d", got, last.epoch)
		}
		_ = l.Release(ctx)

		// The epoch is the wall clock's: the new cluster's first lock must
		// come at a later millisecond than the old one's, as it does when
		// a cluster is rebuilt.
		for time.Now().UnixMilli() <= last.epoch {
			time.Sleep(time.Millisecond)
		}
		var fresh *clientv3.Client
		if c.Mode() == testenv.Embedded {
			fresh = testenv.NewEtcd(t, testenv.Embedded).Client()
		} else {
			fresh = namespaced(c, c.Key("new")+":")
		}
		first, err := etcdlock.New(fresh).TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("new cluster: TryLock: %v", err)
		}
		defer first.Release(ctx)
		got := grantOf(first)
		t.Logf("old cluster's last grant %+v, new cluster's first %+v", last, got)
		if got.epoch <= last.epoch {
			t.Errorf("new cluster's first grant has epoch %d, want later than the old cluster's %d", got.epoch, last.epoch)
		}
		if !got.newer(last) || last.newer(got) {
			t.Errorf("by (Epoch, Fence), the new cluster's first grant %+v is not newer than the old one's last %+v", got, last)
		}
		if c.Mode() == testenv.Embedded && got.fence >= last.fence {
			t.Errorf("the rebuilt cluster's first fence is %d, the old cluster's last %d: want it to count again from 1, as the test assumes",
				got.fence, last.fence)
		}
	})
}

// An epoch key that holds no epoch (something else wrote it) makes TryLock
// and Lock fail at once with ErrUnavailable, rather than hand out grants
// without an epoch, and leaves nothing queued.
func TestEtcdBadEpochIsUnavailable(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		cl := namespaced(c, c.Key("bad-epoch")+":")
		if _, err := cl.Put(ctx, "dlock:epoch", "yesterday"); err != nil {
			t.Fatal(err)
		}
		m := etcdlock.New(cl)
		if _, err := m.TryLock(ctx, "k", time.Second); !errors.Is(err, dlock.ErrUnavailable) {
			t.Errorf("TryLock = %v, want ErrUnavailable", err)
		}
		start := time.Now()
		if _, err := m.Lock(ctx, "k", time.Second, 10*time.Second); !errors.Is(err, dlock.ErrUnavailable) {
			t.Errorf("Lock = %v, want ErrUnavailable", err)
		}
		within(t, "Lock with a bad epoch", time.Since(start), 2*time.Second)
		resp, err := cl.Get(ctx, "k/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != 0 {
			t.Errorf("%d keys queued after the failures, want none", resp.Count)
		}
	})
}
