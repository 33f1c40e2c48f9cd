package dlock_test

import (
	"context"
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

// startAll restarts members concurrently (a lone member cannot rejoin).
func startAll(c *testenv.EtcdCluster, members ...int) {
	var wg sync.WaitGroup
	for _, i := range members {
		wg.Go(func() { c.Start(i) })
	}
	wg.Wait()
}
