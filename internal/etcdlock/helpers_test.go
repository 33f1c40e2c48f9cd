package etcdlock_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// etcdLocker returns an etcd locker on a fresh client, as another process
// would have.
func etcdLocker(t *testing.T, c *testenv.EtcdCluster) *etcdlock.Locker {
	t.Helper()
	return etcdlock.New(c.Client())
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

// within fails t unless d is at most limit: for "returned promptly".
func within(t *testing.T, what string, d, limit time.Duration) {
	t.Helper()
	if d > limit {
		t.Errorf("%s took %v, want at most %v", what, d, limit)
	}
}

// acquired is what a Lock started by lockLater came back with, and when.
type acquired struct {
	l   *dlock.Lock
	err error
	at  time.Time
}

// lockLater starts locker.Lock(ctx, key, ttl, wait) in a goroutine and
// returns the channel its outcome arrives on, stamped with the time it
// returned.
func lockLater(ctx context.Context, locker dlock.Locker, key string, ttl, wait time.Duration) <-chan acquired {
	got := make(chan acquired, 1)
	go func() {
		l, err := locker.Lock(ctx, key, ttl, wait)
		got <- acquired{l, err, time.Now()}
	}()
	return got
}

// lockGoroutines counts the goroutines running code of this package or of
// the handles' package, dlock (not their tests).
func lockGoroutines() int {
	return goroutinesIn("flashsale/internal/etcdlock.") + goroutinesIn("flashsale/internal/dlock.")
}

// goroutinesIn counts the goroutines with a frame whose name contains fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			count++
		}
	}
	return count
}
