package testenv

import (
	"os"
	"testing"
	"time"
)

// laterTB is a testing.TB whose cleanups run when the test says (end), so
// that one test can play several test processes of different lifetimes.
type laterTB struct {
	testing.TB
	cleanups []func()
}

func (l *laterTB) Cleanup(f func()) { l.cleanups = append(l.cleanups, f) }

func (l *laterTB) end() {
	for i := len(l.cleanups) - 1; i >= 0; i-- {
		l.cleanups[i]()
	}
	l.cleanups = nil
}

// TestEtcdGuardTakesTurns: a process that reserves the real cluster waits
// for the others using it to end, and keeps newcomers waiting until it
// ends. Two clusterGuards play two processes: a flock belongs to an open
// file, so two holds in one process conflict as two processes' do.
func TestEtcdGuardTakesTurns(t *testing.T) {
	endpoints := []string{"guard-test-" + randomID(5) + ":2379"} // a lock file of its own
	cleanLockFiles(t, endpoints)
	var a, b clusterGuard
	ta, tb := &laterTB{TB: t}, &laterTB{TB: t}
	defer ta.end()
	defer tb.end()

	a.share(ta, endpoints)
	b.share(tb, endpoints) // both shared: no wait
	reserved := goDone(func() { b.reserve(tb) })
	notYet(t, reserved, "b reserved the cluster while a was using it")
	ta.end()
	waitDone(t, reserved, "b did not get the cluster once a had ended")

	ta2 := &laterTB{TB: t}
	defer ta2.end()
	shared := goDone(func() { a.share(ta2, endpoints) })
	notYet(t, shared, "a started while b had the cluster reserved")
	tb.end()
	waitDone(t, shared, "a did not get the cluster once b had ended")
}

// TestEtcdGuardReserveIsNotStarved: a process waiting to reserve keeps
// newcomers out, so the processes using the cluster when it asked are all
// it waits for (flock alone lets shared holds jump a waiting exclusive
// one, so a reserving test would wait for tests that started after it).
func TestEtcdGuardReserveIsNotStarved(t *testing.T) {
	endpoints := []string{"guard-test-" + randomID(5) + ":2379"}
	cleanLockFiles(t, endpoints)
	var a, b, c clusterGuard
	ta, tb, tc := &laterTB{TB: t}, &laterTB{TB: t}, &laterTB{TB: t}
	defer ta.end()
	defer tb.end()
	defer tc.end()

	a.share(ta, endpoints)
	b.share(tb, endpoints)
	reserved := goDone(func() { b.reserve(tb) })
	notYet(t, reserved, "b reserved the cluster while a was using it")
	shared := goDone(func() { c.share(tc, endpoints) })
	notYet(t, shared, "c, a newcomer, started while b waited to reserve")
	ta.end()
	waitDone(t, reserved, "b did not get the cluster once a had ended")
	notYet(t, shared, "c started while b had the cluster reserved")
	tb.end()
	waitDone(t, shared, "c did not get the cluster once b had ended")
}

// TestEtcdGuardTwoReserve: two processes reserving at once take turns.
func TestEtcdGuardTwoReserve(t *testing.T) {
	endpoints := []string{"guard-test-" + randomID(5) + ":2379"}
	cleanLockFiles(t, endpoints)
	var a, b clusterGuard
	ta, tb := &laterTB{TB: t}, &laterTB{TB: t}
	defer ta.end()
	defer tb.end()

	a.share(ta, endpoints)
	b.share(tb, endpoints)
	ra := goDone(func() { a.reserve(ta) })
	rb := goDone(func() { b.reserve(tb) })
	first, second, tFirst := ra, rb, ta
	select {
	case <-ra:
	case <-rb:
		first, second, tFirst = rb, ra, tb
	case <-time.After(10 * time.Second):
		t.Fatal("neither of two processes reserving at once got the cluster")
	}
	waitDone(t, first, "")
	notYet(t, second, "both processes had the cluster reserved at once")
	tFirst.end()
	waitDone(t, second, "the second process did not get the cluster once the first had ended")
}

// cleanLockFiles removes the lock files of endpoints when t ends.
func cleanLockFiles(t *testing.T, endpoints []string) {
	t.Cleanup(func() {
		os.Remove(etcdLockPath(endpoints))
		os.Remove(etcdLockPath(endpoints) + ".gate")
	})
}

// goDone runs f in a goroutine and returns a channel closed when it returns.
func goDone(f func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return done
}

func notYet(t *testing.T, done <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-done:
		t.Fatal(msg)
	case <-time.After(200 * time.Millisecond):
	}
}

func waitDone(t *testing.T, done <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal(msg)
	}
}
