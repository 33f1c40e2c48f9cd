package zklock_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// The caller's ctx ending at each step of an acquisition and a release:
// the call returns at once, and no node is left in the queue. (Ending
// while queued is TestCallerCancels.)

// TestCancelledBeforeStart: with ctx ended already, Lock and TryLock
// return its error without sending a create.
func TestCancelledBeforeStart(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	m := newLocker(t, z, z.Servers(), 0)
	holder, err := newLocker(t, z, z.Servers(), 0).Lock(context.Background(), "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	look := z.Conn()
	if _, err := look.Sync(z.Root()); err != nil { // look's member has applied the holder's create
		t.Fatal(err)
	}
	_, before, err := look.Children(z.Root() + "/locks/k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Lock(ctx, "k", time.Second, time.Minute); !errors.Is(err, dlock.ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Errorf("Lock on an ended ctx: %v, want ErrTimeout and context.Canceled", err)
	}
	if _, err := m.TryLock(ctx, "k", time.Second); !errors.Is(err, context.Canceled) || errors.Is(err, dlock.ErrUnavailable) {
		t.Errorf("TryLock on an ended ctx: %v, want context.Canceled", err)
	}
	if err := m.Ready(context.Background()); err != nil { // answered after any request sent before it
		t.Fatal(err)
	}
	if _, err := look.Sync(z.Root()); err != nil { // and whatever m sent
		t.Fatal(err)
	}
	_, after, err := look.Children(z.Root() + "/locks/k")
	if err != nil || after.Cversion != before.Cversion {
		t.Errorf("the queue's children changed %d times (%v): a create was sent for an ended ctx", after.Cversion-before.Cversion, err)
	}
	release(t, holder)
}

// TestCancelWhileCreating: ctx ends after the ensemble made the node and
// before its answer arrived. Lock returns at once; once the answer
// arrives, the node (owned by the live session) is found and deleted in
// the background, instead of blocking the key for the session's life.
func TestCancelWhileCreating(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	m := newLocker(t, z, []string{link.Addr()}, 4*time.Second)
	dir := []byte(z.Root() + "/locks/k/_c_")
	link.HoldAt(func(chunk []byte) int {
		i := bytes.Index(chunk, dir)
		if i < 0 {
			return -1
		}
		return max(i-24, 0) // the frame's length, header and the path's length come first
	})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := m.Lock(ctx, "k", time.Second, time.Minute)
		got <- err
	}()
	look := z.Conn()
	testenv.WaitFor(t, 10*time.Second, "the create's answer held", link.Held)
	if q := queueOf(t, look, z, "k"); len(q) != 1 {
		t.Fatalf("queue %v while the answer is held, want the node made", q)
	}
	cancel()
	select {
	case err := <-got:
		if !errors.Is(err, dlock.ErrTimeout) || !errors.Is(err, context.Canceled) {
			t.Errorf("Lock cancelled while creating: %v, want ErrTimeout and context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Lock did not return when its ctx ended with the create's answer on its way")
	}
	link.Release()
	testenv.WaitFor(t, 10*time.Second, "the node swept up", func() bool { return len(queueOf(t, look, z, "k")) == 0 })
}

// TestCancelWhileReleasing: a Release whose ctx ends before the ensemble
// answered (the link stalled) says the lock may still be held
// (dlock.ErrUnavailable), and deletes the node in the background once the
// link is back.
func TestCancelWhileReleasing(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	m := newLocker(t, z, []string{link.Addr()}, 4*time.Second)
	l, err := m.Lock(context.Background(), "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	link.Hold()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := l.Release(ctx); !errors.Is(err, dlock.ErrUnavailable) {
		t.Errorf("Release with the link stalled: %v, want ErrUnavailable", err)
	}
	if l.Context().Err() == nil {
		t.Error("the handle's Context is live after its Release")
	}
	look := z.Conn()
	if q := queueOf(t, look, z, "k"); len(q) != 1 {
		t.Fatalf("queue %v with the deletion held, want the node still there", q)
	}
	link.Release()
	testenv.WaitFor(t, 10*time.Second, "the node deleted in the background", func() bool { return len(queueOf(t, look, z, "k")) == 0 })
}

// TestTryLockBound: TryLock against an ensemble that does not answer gives
// up after its own bound with dlock.ErrUnavailable (not a held key), and
// with the caller's error when the caller's ctx ends first; the creates it
// sent are swept up once the link is back.
func TestTryLockBound(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	m := newLocker(t, z, []string{link.Addr()}, 4*time.Second)
	if err := m.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	link.Hold()
	start := time.Now()
	_, err := m.TryLock(context.Background(), "k", time.Second)
	if took := time.Since(start); !errors.Is(err, dlock.ErrUnavailable) || errors.Is(err, dlock.ErrNotObtained) || took > 3*time.Second {
		t.Errorf("TryLock with no answer: %v after %v, want ErrUnavailable after about 1.5s", err, took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := m.TryLock(ctx, "k", time.Second); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, dlock.ErrUnavailable) {
		t.Errorf("TryLock whose caller's ctx ended first: %v, want the caller's DeadlineExceeded", err)
	}
	link.Release()
	if err := m.Ready(context.Background()); err != nil { // the creates have been answered
		t.Fatal(err)
	}
	look := z.Conn()
	testenv.WaitFor(t, 10*time.Second, "the creates swept up", func() bool { return len(queueOf(t, look, z, "k")) == 0 })
}
