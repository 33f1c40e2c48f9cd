package testenv

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The real etcd cluster is shared by every test process of one run: `go
// test ./...` runs several packages at once, each its own process, against
// the same members. A member that one test pauses (Stop) is paused for all
// of them, and two of three paused take the quorum away from tests that
// never asked for a fault. So the processes take turns through a file
// lock beside the cluster's name: every test on the real cluster holds it
// shared while it runs, and a test that will stop members (Reserve) holds
// it exclusively, waiting until the others have let go, and keeping them
// waiting until it ends and its members are back.

// etcdGuard is this process's hold on the real cluster's file lock. Tests
// in one process share one hold (a flock belongs to the open file, so the
// process never waits for itself); users counts the clusters that need it.
type etcdGuard struct {
	mu        sync.Mutex
	f         *os.File
	users     int
	exclusive bool
}

var realEtcdGuard etcdGuard

// share holds the lock for tb, shared, from now until tb's cleanups run
// (register it before the cleanups that must run while it is held: they run
// last to first). It waits while another process has it exclusively.
func (g *etcdGuard) share(tb testing.TB, endpoints []string) {
	tb.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.users == 0 {
		f, err := os.OpenFile(etcdLockPath(endpoints), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			tb.Fatalf("testenv: the real etcd cluster's lock file: %v", err)
		}
		if err := flockWait(tb, f, syscall.LOCK_SH); err != nil {
			f.Close()
			tb.Fatalf("testenv: %v", err)
		}
		g.f = f
	}
	g.users++
	tb.Cleanup(g.leave)
}

// reserve makes this process's hold exclusive until every cluster that
// shares it has ended. Only while share holds it.
func (g *etcdGuard) reserve(tb testing.TB) {
	tb.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.exclusive {
		return
	}
	// Not atomic: flock lets go of the shared hold before it waits for the
	// exclusive one, so two processes reserving at once take turns instead
	// of waiting for each other forever.
	if err := flockWait(tb, g.f, syscall.LOCK_EX); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	g.exclusive = true
}

// leave ends one cluster's need; the last one lets go of the lock.
func (g *etcdGuard) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.users--; g.users > 0 {
		return
	}
	g.f.Close() // closing the file lets go of its flock
	g.f = nil
	g.exclusive = false
}

// flockWait takes how (LOCK_SH or LOCK_EX) on f, waiting as long as it
// takes; the test binary's -timeout ends a wait that never ends. It says
// in tb's log when it has to wait.
func flockWait(tb testing.TB, f *os.File, how int) error {
	err := flock(f, how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		start := time.Now()
		tb.Logf("testenv: another test process is using the real etcd cluster (%s); waiting for it", f.Name())
		if err = flock(f, how); err == nil {
			tb.Logf("testenv: waited %v for the real etcd cluster", time.Since(start).Round(time.Millisecond))
		}
	}
	if err != nil {
		return fmt.Errorf("flock %s: %w", f.Name(), err)
	}
	return nil
}

// flock is syscall.Flock, retried when a signal interrupts the wait.
func flock(f *os.File, how int) error {
	for {
		if err := syscall.Flock(int(f.Fd()), how); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// etcdLockPath names the lock file of the cluster at endpoints, the same in
// every process that names the same members.
func etcdLockPath(endpoints []string) string {
	sorted := slices.Sorted(slices.Values(endpoints))
	h := fnv.New64a()
	h.Write([]byte(strings.Join(sorted, ",")))
	return filepath.Join(os.TempDir(), fmt.Sprintf("flashsale-test-etcd-%016x.lock", h.Sum64()))
}
