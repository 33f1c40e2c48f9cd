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
	"github.com/flashsale/flashsale/internal/harness/testenv"
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
	// The first lock of a Locker creates the root, its lock directory and
	// the epoch: several consensus writes, which on a loaded 2-core machine
	// can outlast a test's one-second wait. Take it here, unhurried.
	warm, err := m.Lock(ctx, "warm-up", time.Second, 10*time.Second)
	if err != nil {
		t.Fatalf("the Locker's first lock: %v", err)
	}
	if err := warm.Release(ctx); err != nil {
		t.Fatalf("the Locker's first release: %v", err)
	}
	return m
}

// lockerPerMember returns a Locker on each member alone, as shops that
// each talk to another member would have.
func lockerPerMember(t *testing.T, z *testenv.ZooKeeper) []*zklock.Locker {
	t.Helper()
	var lockers []*zklock.Locker
	for _, s := range z.Servers() {
		lockers = append(lockers, newLocker(t, z, []string{s}, 0))
	}
	return lockers
}

// grantsGrow takes key n times, on lockers in turn, waiting at most wait
// each time, and releases each grant; it checks that every grant's fence
// is larger than the one before (the first's than after's, if not nil),
// with the same epoch. It returns the last grant.
func grantsGrow(t *testing.T, lockers []*zklock.Locker, key string, n int, wait time.Duration, after *dlock.Lock) *dlock.Lock {
	t.Helper()
	last := after
	for i := range n {
		l, err := lockers[i%len(lockers)].Lock(context.Background(), key, time.Second, wait)
		if err != nil {
			t.Fatalf("grant %d: %v", i+1, err)
		}
		if last != nil && (l.Epoch() != last.Epoch() || l.Fence() <= last.Fence()) {
			t.Errorf("grant %d: (epoch, fence) = (%d, %#x) after (%d, %#x): want the same epoch and a larger fence",
				i+1, l.Epoch(), l.Fence(), last.Epoch(), last.Fence())
		}
		release(t, l)
		last = l
	}
	return last
}

// queueOf returns the names of the nodes queued on key, in queue order, as
// another client sees them: none if the key's directory is gone.
func queueOf(t *testing.T, c *zk.Conn, z *testenv.ZooKeeper, key string) []string {
	t.Helper()
	// c may be on a follower, which can answer a read before it has
	// applied a write the quorum committed: catch it up first.
	if _, err := c.Sync(z.Root()); err != nil {
		t.Fatalf("sync before listing the queue of %q: %v", key, err)
	}
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
