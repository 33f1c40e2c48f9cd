package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/testenv"
	"github.com/flashsale/flashsale/internal/zklock"
	"github.com/flashsale/flashsale/internal/zkproc"
)

// TestFenceGrows: every grant of a key, from any client, carries a larger
// fence than the grant before it, and the ensemble's epoch, the same for
// all of them.
func TestFenceGrows(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	var lockers []*zklock.Locker
	for _, s := range z.Servers() {
		lockers = append(lockers, newLocker(t, z, []string{s}, 0))
	}
	var last *dlock.Lock
	for i := range 9 {
		l, err := lockers[i%len(lockers)].Lock(context.Background(), "k", time.Second, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if l.Epoch() <= 0 || l.Epoch() > time.Now().UnixMilli() {
			t.Errorf("epoch %d: want the ensemble's first lock's time, in ms since 1970", l.Epoch())
		}
		if last != nil && (l.Epoch() != last.Epoch() || l.Fence() <= last.Fence()) {
			t.Errorf("grant %d: (epoch, fence) = (%d, %#x) after (%d, %#x): want the same epoch and a larger fence",
				i, l.Epoch(), l.Fence(), last.Epoch(), last.Fence())
		}
		release(t, l)
		last = l
	}
}

// TestMemberDown: with one member of three paused (the leader, so the
// other two elect a new one), locks are still granted, and the fences
// still grow past those granted before.
func TestMemberDown(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	if !z.CanStop() {
		t.Skipf("pausing a member needs %s", testenv.EnvZooKeeperPids)
	}
	z.Reserve()
	m := newLocker(t, z, z.Servers(), 0)
	ctx := context.Background()
	before, err := m.Lock(ctx, "k", time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	release(t, before)

	leader := leaderOf(t, z)
	z.Stop(leader)
	defer z.Start(leader)
	last := before
	for i := range 5 {
		start := time.Now()
		l, err := m.Lock(ctx, "k", time.Second, 20*time.Second)
		t.Logf("Lock %d took %v", i+1, time.Since(start))
		if err != nil {
			t.Fatalf("Lock %d with member %d of 3 paused: %v", i+1, leader+1, err)
		}
		if l.Fence() <= last.Fence() {
			t.Errorf("fence %#x after %#x: want it larger", l.Fence(), last.Fence())
		}
		release(t, l)
		last = l
	}
}

// TestQuorumLost: with two members of three paused the ensemble cannot
// serve: Lock gives up within its wait, with dlock.ErrUnavailable or
// dlock.ErrTimeout, and grants nothing. Once they are back, locks are
// granted again, and no node of the failed attempts is left in the queue.
func TestQuorumLost(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	if !z.CanStop() {
		t.Skipf("pausing members needs %s", testenv.EnvZooKeeperPids)
	}
	z.Reserve()
	m := newLocker(t, z, z.Servers(), 0)
	ctx := context.Background()
	l, err := m.Lock(ctx, "k", time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	release(t, l)

	z.Stop(0)
	z.Stop(1)
	const wait = 500 * time.Millisecond
	for i := range 3 {
		start := time.Now()
		l, err := m.Lock(ctx, "k", time.Second, wait)
		took := time.Since(start)
		if err == nil {
			release(t, l)
			t.Fatalf("Lock %d granted with two members of three paused", i+1)
		}
		if !errors.Is(err, dlock.ErrUnavailable) && !errors.Is(err, dlock.ErrTimeout) {
			t.Errorf("Lock %d without a quorum: %v, want ErrUnavailable or ErrTimeout", i+1, err)
		}
		if took > wait+time.Second {
			t.Errorf("Lock %d without a quorum gave up after %v, want about the %v wait", i+1, took, wait)
		}
	}
	z.Start(0)
	z.Start(1)

	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := m.Lock(ctx, "k", time.Second, 2*time.Second)
		if err == nil {
			release(t, l)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no lock 30 s after the members came back: %v", err)
		}
	}
	look := z.Conn()
	waitFor(t, 20*time.Second, "the failed attempts' nodes swept", func() bool { return len(queueOf(t, look, z, "k")) == 0 })
}

// leaderOf returns the index of the ensemble's leader.
func leaderOf(t *testing.T, z *testenv.ZooKeeper) int {
	t.Helper()
	for i, s := range z.Servers() {
		if mode, err := zkproc.Mode(context.Background(), s); err == nil && mode == "leader" {
			return i
		}
	}
	t.Fatal("no member says it leads (srvr)")
	return -1
}
