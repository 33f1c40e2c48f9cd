package zklock_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/testenv"
	"github.com/flashsale/flashsale/internal/zklock"
)

// testTimeout is the session timeout the tests' lockers ask for, unless a
// test needs a shorter one.
const testTimeout = 2 * time.Second

// newLocker returns a Locker on servers, keeping its locks under the
// test's own root, closed when the test ends (before testenv deletes the
// root). timeout 0 means testTimeout.
func newLocker(t *testing.T, z *testenv.ZooKeeper, servers []string, timeout time.Duration) *zklock.Locker {
	t.Helper()
	if timeout == 0 {
		timeout = testTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := zklock.New(ctx, servers, zklock.Options{Root: z.Root(), SessionTimeout: timeout})
	if err != nil {
		t.Fatalf("zklock.New(%v): %v", servers, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// queueOf returns the names of the nodes queued on key, in queue order, as
// another client sees them: none if the key's directory is gone.
func queueOf(t *testing.T, c *zk.Conn, z *testenv.ZooKeeper, key string) []string {
	t.Helper()
	kids, _, err := c.Children(z.Root() + "/locks/" + key)
	if err == zk.ErrNoNode {
		return nil
	}
	if err != nil {
		t.Fatalf("list the queue of %q: %v", key, err)
	}
	slices.SortFunc(kids, func(a, b string) int { return strings.Compare(a[len(a)-10:], b[len(b)-10:]) })
	return kids
}

// waitFor polls cond until it holds, failing t after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// counter is a dlock.Observer that counts the retries it hears of.
type counter struct{ retried atomic.Int64 }

func (c *counter) Retried()              { c.retried.Add(1) }
func (c *counter) Voted(int, dlock.Vote) {}
func (c *counter) reset()                { c.retried.Store(0) }
func (c *counter) count() int64          { return c.retried.Load() }

var _ dlock.Observer = (*counter)(nil)

// release releases l on a fresh context, failing t on error.
func release(t *testing.T, l *dlock.Lock) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Release(ctx); err != nil {
		t.Errorf("Release %q: %v", l.Key(), err)
	}
}
