package zklock_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/zklock"
)

// TestSessionLostCancelsContext: a holder cut off from the ensemble (its
// link stalled, as in a partition) has its lock's Context cancelled
// before the ensemble expires its session and grants the lock to another:
// the old holder is told before the new one is let in. The new grant's
// fence is larger, from the same ensemble (the same epoch). Once the link
// is back, the old client learns its session expired and works on in a
// new one.
func TestSessionLostCancelsContext(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	const timeout = 3 * time.Second
	cutOff := newLocker(t, z, []string{link.Addr()}, timeout)
	other := newLocker(t, z, z.Servers(), 0)
	ctx := context.Background()
	old, err := cutOff.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	link.Hold()
	start := time.Now()
	got := make(chan *dlock.Lock, 1)
	go func() {
		l, err := other.Lock(ctx, "k", time.Second, 30*time.Second)
		if err != nil {
			t.Errorf("the other client's Lock: %v", err)
		}
		got <- l
	}()
	select {
	case <-old.Context().Done():
	case <-time.After(2 * timeout):
		t.Fatalf("the cut-off holder's Context was not cancelled within %v", 2*timeout)
	}
	cancelled := time.Since(start)
	if cause := context.Cause(old.Context()); !errors.Is(cause, dlock.ErrNotHeld) {
		t.Errorf("the cut-off holder's cause: %v, want ErrNotHeld", cause)
	}
	if cancelled > timeout {
		t.Errorf("the cut-off holder was told after %v, later than the %v session timeout", cancelled, timeout)
	}
	next := <-got
	if next == nil {
		t.FailNow()
	}
	t.Logf("holder told after %v, the next one let in after %v", cancelled, time.Since(start))
	if next.Fence() <= old.Fence() || next.Epoch() != old.Epoch() {
		t.Errorf("the next grant's (epoch, fence) = (%d, %#x) after (%d, %#x): want the same epoch and a larger fence",
			next.Epoch(), next.Fence(), old.Epoch(), old.Fence())
	}
	release(t, next)

	link.Release()
	if err := old.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Errorf("the cut-off holder's Release: %v, want ErrNotHeld", err)
	}
	again, err := cutOff.Lock(ctx, "k", time.Second, 30*time.Second)
	if err != nil {
		t.Fatalf("the cut-off client, back in a new session: %v", err)
	}
	if again.Fence() <= next.Fence() {
		t.Errorf("fence %#x after %#x: want it larger", again.Fence(), next.Fence())
	}
	release(t, again)
}

// TestProtectedCreate: the connection is lost after the ensemble made a
// waiter's node and before its answer arrived. The client finds that node
// by its id once it has reconnected, instead of creating a second one and
// leaving the first, owned by its live session, to block the key: the
// queue holds the one node, the waiter gets the lock on it, and once it
// releases the key is free.
func TestProtectedCreate(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	m := newLocker(t, z, []string{link.Addr()}, 4*time.Second)
	ctx := context.Background()
	// Hold what the member sends from the create's answer on: the answer
	// names the new node, under the key's directory.
	dir := []byte(z.Root() + "/locks/k/_c_")
	link.HoldAt(func(chunk []byte) int {
		i := bytes.Index(chunk, dir)
		if i < 0 {
			return -1
		}
		return max(i-24, 0) // the frame's length, header and the path's length come first
	})
	got := make(chan error, 1)
	var l *dlock.Lock
	go func() {
		var err error
		l, err = m.Lock(ctx, "k", time.Second, 30*time.Second)
		got <- err
	}()
	look := z.Conn()
	testenv.WaitFor(t, 10*time.Second, "the create's answer held", link.Held)
	made := queueOf(t, look, z, "k")
	if len(made) != 1 {
		t.Fatalf("queue %v while the answer is held, want the one node made", made)
	}
	link.Stop()    // the connection is lost, the answer with it
	link.Release() // (to no connection: they are closed)
	if err := link.Start(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock after a lost answer: %v", err)
	}
	if l.Token() != made[0] {
		t.Errorf("the lock is held on %s, want the node the lost create made, %s", l.Token(), made[0])
	}
	if q := queueOf(t, look, z, "k"); len(q) != 1 {
		t.Errorf("queue %v, want the one node", q)
	}
	release(t, l)
	other := newLocker(t, z, z.Servers(), 0)
	free, err := other.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatalf("the key after the release: %v (queue %v)", err, queueOf(t, look, z, "k"))
	}
	release(t, free)
}

// TestCloseFreesLocks: Close ends the session, which deletes its nodes at
// once: its handles' Contexts end with ErrClosed, and another client gets
// the key without waiting for a timeout.
func TestCloseFreesLocks(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	m := newLocker(t, z, z.Servers(), 0)
	other := newLocker(t, z, z.Servers(), 0)
	ctx := context.Background()
	l, err := m.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if cause := context.Cause(l.Context()); !errors.Is(cause, zklock.ErrClosed) || !errors.Is(cause, dlock.ErrNotHeld) {
		t.Errorf("the handle's cause after Close: %v, want ErrClosed and ErrNotHeld", cause)
	}
	next, err := other.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatalf("Lock after the holder's Close: %v", err)
	}
	release(t, next)
	if _, err := m.Lock(ctx, "k", time.Second, time.Second); !errors.Is(err, zklock.ErrClosed) {
		t.Errorf("Lock after Close: %v, want ErrClosed", err)
	}
}
