package zklock_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// replyCut finds, in a chunk from the member, a reply to a request (xid >=
// 0) as the chunk's first frame: not a ping's answer (xid -2), not a watch
// event (xid -1).
func replyCut(chunk []byte) int {
	if len(chunk) < 8 {
		return -1
	}
	if xid := int32(binary.BigEndian.Uint32(chunk[4:8])); xid >= 0 {
		return 0
	}
	return -1
}

// TestReleaseAfterLostDeleteAnswer: Release's delete reaches the
// member and is carried out, and the connection is lost before its answer
// comes. The lock was held until the node went (Release's doc: deleted,
// nil), yet the retry finds the node gone.
func TestReleaseAfterLostDeleteAnswer(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	m := newLocker(t, z, []string{link.Addr()}, 4*time.Second)
	ctx := context.Background()
	l, err := m.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	look := z.Conn()
	link.HoldAt(replyCut)
	got := make(chan error, 1)
	go func() {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		got <- l.Release(rctx)
	}()
	testenv.WaitFor(t, 10*time.Second, "the delete's answer held", link.Held)
	testenv.WaitFor(t, 10*time.Second, "the node deleted", func() bool { return len(queueOf(t, look, z, "k")) == 0 })
	link.Stop()
	link.Release()
	if err := link.Start(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Errorf("Release whose delete landed and whose answer was lost: %v, want nil (the lock was held until then)", err)
	}
}

// TestWaiterSessionExpires: a waiter queued behind a holder is cut
// off long enough for the ensemble to expire its session (its node goes).
// Once the link is back it must queue again in a new session and get the
// lock when the holder lets go, leaving no node of the old session.
func TestWaiterSessionExpires(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	const timeout = 2 * time.Second
	holder := newLocker(t, z, z.Servers(), 0)
	waiter := newLocker(t, z, []string{link.Addr()}, timeout)
	ctx := context.Background()
	h, err := holder.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	look := z.Conn()
	got := make(chan error, 1)
	var wl *dlock.Lock
	go func() {
		var err error
		wl, err = waiter.Lock(ctx, "k", time.Second, 30*time.Second)
		got <- err
	}()
	testenv.WaitFor(t, 10*time.Second, "the waiter queued", func() bool { return len(queueOf(t, look, z, "k")) == 2 })
	link.Hold()
	testenv.WaitFor(t, 4*timeout, "the waiter's session expired (its node gone)", func() bool {
		return len(queueOf(t, look, z, "k")) == 1
	})
	link.Stop()
	link.Release()
	if err := link.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the waiter queued again", func() bool { return len(queueOf(t, look, z, "k")) == 2 })
	release(t, h)
	if err := <-got; err != nil {
		t.Fatalf("the waiter's Lock: %v", err)
	}
	if q := queueOf(t, look, z, "k"); len(q) != 1 || q[0] != wl.Token() {
		t.Errorf("queue %v, want only the waiter's node %s", q, wl.Token())
	}
	release(t, wl)
}

// TestReleaseCutOff: the holder's link is stopped and Release's
// context ends before it reconnects: ErrUnavailable, and the node is
// deleted in the background once the link is back (the session lived).
func TestReleaseCutOff(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	m := newLocker(t, z, []string{link.Addr()}, 4*time.Second)
	ctx := context.Background()
	l, err := m.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	link.Stop()
	rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = l.Release(rctx)
	cancel()
	if !errors.Is(err, dlock.ErrUnavailable) {
		t.Errorf("Release cut off: %v, want ErrUnavailable", err)
	}
	if err := link.Start(); err != nil {
		t.Fatal(err)
	}
	look := z.Conn()
	testenv.WaitFor(t, 10*time.Second, "the node deleted in the background", func() bool {
		return len(queueOf(t, look, z, "k")) == 0
	})
}

// TestTryLockDuringGiveUp: TryLock while the session is given up
// client-side (link held past 0.9 of the timeout) must not hang past its
// 1.5 s bound.
func TestTryLockDuringGiveUp(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	m := newLocker(t, z, []string{link.Addr()}, 4*time.Second)
	ctx := context.Background()
	l, err := m.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	link.Hold()
	<-l.Context().Done()
	start := time.Now()
	_, err = m.TryLock(ctx, "k2", time.Second)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("TryLock took %v", took)
	}
	if !errors.Is(err, dlock.ErrUnavailable) {
		t.Errorf("TryLock with the session given up: %v, want ErrUnavailable", err)
	}
	link.Release()
}

// TestSessionExpiresBetweenCreateAndList: the create's answer is
// held until the ensemble has expired the session (the node it made goes
// with it); once the link is back the client has a new session, finds no
// node of its id, creates again and gets the lock, leaving one node.
func TestSessionExpiresBetweenCreateAndList(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	const timeout = 2 * time.Second
	m := newLocker(t, z, []string{link.Addr()}, timeout)
	ctx := context.Background()
	// Make the key's directory and the epoch first, so that the next
	// request with an answer is the create.
	warm, err := m.Lock(ctx, "k", time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	release(t, warm)
	look := z.Conn()
	link.HoldAt(replyCut)
	got := make(chan error, 1)
	var l *dlock.Lock
	go func() {
		var err error
		l, err = m.Lock(ctx, "k", time.Second, 30*time.Second)
		got <- err
	}()
	testenv.WaitFor(t, 10*time.Second, "the create's answer held", link.Held)
	testenv.WaitFor(t, 4*timeout, "the session expired, its node gone", func() bool {
		return len(queueOf(t, look, z, "k")) == 0
	})
	link.Stop()
	link.Release()
	if err := link.Start(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock across an expiry between create and list: %v", err)
	}
	if q := queueOf(t, look, z, "k"); len(q) != 1 || q[0] != l.Token() {
		t.Errorf("queue %v, want the one node %s", q, l.Token())
	}
	release(t, l)
}

// TestGiveUpWithCreateInFlight: Lock's wait ends while its create's
// answer is held; the node the create made is swept once the link is back
// (the session lived), and the key is free.
func TestGiveUpWithCreateInFlight(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	m := newLocker(t, z, []string{link.Addr()}, 6*time.Second)
	ctx := context.Background()
	warm, err := m.Lock(ctx, "k", time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	release(t, warm)
	look := z.Conn()
	link.HoldAt(replyCut)
	_, err = m.Lock(ctx, "k", time.Second, 500*time.Millisecond)
	if err == nil {
		t.Fatal("Lock with its create's answer held: nil error")
	}
	t.Logf("Lock: %v", err)
	if q := queueOf(t, look, z, "k"); len(q) != 1 {
		t.Fatalf("queue %v, want the node the create made", q)
	}
	link.Stop()
	link.Release()
	if err := link.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the leftover swept", func() bool { return len(queueOf(t, look, z, "k")) == 0 })
	other := newLocker(t, z, z.Servers(), 0)
	l, err := other.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatalf("the key after the sweep: %v", err)
	}
	release(t, l)
}
