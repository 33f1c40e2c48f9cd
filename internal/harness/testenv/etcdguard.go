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
// it exclusively, waiting until the others have let go, and keeping every
// other process waiting until this one's tests on the cluster have ended
// and their members are back.
//
// flock does not queue a writer ahead of readers who come after it, so a
// second file is the turnstile: a process passes it (shared, for a moment)
// on its way to the lock, and a process that reserves closes it
// (exclusively) while it waits, so that newcomers wait behind it instead
// of keeping it waiting for ever.

// clusterGuard is this process's hold on a real cluster's file lock. Tests
// in one process share one hold (a flock belongs to the open file, so the
// process never waits for itself); users counts the clusters that need it.
// The real ZooKeeper ensemble is shared the same way, with a guard of its
// own (realZooKeeperGuard).
type clusterGuard struct {
	what      string // "etcd cluster" (also when empty), "ZooKeeper ensemble"
	mu        sync.Mutex
	f, gate   *os.File // the lock, and its turnstile
	users     int
	exclusive bool
}

var realEtcdGuard = clusterGuard{what: "etcd cluster"}

// share holds the lock for tb, shared, from now until tb's cleanups run
// (register it before the cleanups that must run while it is held: they run
// last to first). It waits while another process has it exclusively or
// waits to.
func (g *clusterGuard) share(tb testing.TB, endpoints []string) {
	tb.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.users == 0 {
		path := lockPath(g.name(), endpoints)
		f, ferr := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
		gate, gerr := os.OpenFile(path+".gate", os.O_CREATE|os.O_RDWR, 0o666)
		if err := errors.Join(ferr, gerr); err != nil {
			closeFiles(f, gate)
			tb.Fatalf("testenv: the real %s's lock files: %v", g.name(), err)
		}
		err := flockWait(tb, g.name(), gate, syscall.LOCK_SH)
		if err == nil {
			err = flockWait(tb, g.name(), f, syscall.LOCK_SH)
			err = errors.Join(err, flock(gate, syscall.LOCK_UN))
		}
		if err != nil {
			closeFiles(f, gate)
			tb.Fatalf("testenv: %v", err)
		}
		g.f, g.gate = f, gate
	}
	g.users++
	tb.Cleanup(g.leave)
}

// reserve makes this process's hold exclusive until every cluster that
// shares it has ended. Only while share holds it.
//
// It lets go of the shared hold before it waits at the turnstile: a
// process reserving at the same time holds the turnstile and waits for
// every shared hold to go. While it waits, then, this process's other
// clusters on the real cluster (a parallel or enclosing test's) are not
// kept safe from the other's faults; the tests here have none.
func (g *clusterGuard) reserve(tb testing.TB) {
	tb.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.exclusive {
		return
	}
	err := flock(g.f, syscall.LOCK_UN)
	if err == nil {
		err = flockWait(tb, g.name(), g.gate, syscall.LOCK_EX)
	}
	if err == nil {
		err = flockWait(tb, g.name(), g.f, syscall.LOCK_EX)
		err = errors.Join(err, flock(g.gate, syscall.LOCK_UN))
	}
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	g.exclusive = true
}

// leave ends one cluster's need; the last one lets go of the lock.
func (g *clusterGuard) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.users--; g.users > 0 {
		return
	}
	closeFiles(g.f, g.gate) // closing a file lets go of its flock
	g.f, g.gate = nil, nil
	g.exclusive = false
}

// closeFiles closes the files that are not nil.
func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// flockWait takes how (LOCK_SH or LOCK_EX) on f, the lock of the real
// servers what, waiting as long as it takes; the test binary's -timeout
// ends a wait that never ends. It says in tb's log when it has to wait.
func flockWait(tb testing.TB, what string, f *os.File, how int) error {
	err := flock(f, how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		start := time.Now()
		tb.Logf("testenv: another test process is using the real %s (%s); waiting for it", what, f.Name())
		if err = flock(f, how); err == nil {
			tb.Logf("testenv: waited %v for the real %s", time.Since(start).Round(time.Millisecond), what)
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

// name returns what the guard guards.
func (g *clusterGuard) name() string {
	if g.what == "" {
		return "etcd cluster"
	}
	return g.what
}

// etcdLockPath names the lock file of the etcd cluster at endpoints.
func etcdLockPath(endpoints []string) string { return lockPath("etcd cluster", endpoints) }

// lockPath names the lock file of the real servers what at endpoints, the
// same in every process that names the same members.
func lockPath(what string, endpoints []string) string {
	sorted := slices.Sorted(slices.Values(endpoints))
	h := fnv.New64a()
	h.Write([]byte(strings.Join(sorted, ",")))
	kind, _, _ := strings.Cut(strings.ToLower(what), " ")
	return filepath.Join(os.TempDir(), fmt.Sprintf("flashsale-test-%s-%016x.lock", kind, h.Sum64()))
}
