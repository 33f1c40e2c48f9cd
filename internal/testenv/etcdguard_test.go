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
// ends. Two etcdGuards play two processes: a flock belongs to an open
// file, so two holds in one process conflict as two processes' do.
func TestEtcdGuardTakesTurns(t *testing.T) {
	endpoints := []string{"guard-test-" + randomID(5) + ":2379"} // a lock file of its own
	t.Cleanup(func() { os.Remove(etcdLockPath(endpoints)) })
	var a, b etcdGuard
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
