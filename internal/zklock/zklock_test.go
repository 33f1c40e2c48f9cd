package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// TestMutualExclusion: buyers on three clients, one on each member, take
// turns on one key; inside, a counter of those inside never passes one,
// and every turn is served.
func TestMutualExclusion(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	lockers := lockerPerMember(t, z)
	const buyers, turns = 24, 5
	var inside, most, served atomic.Int64
	errs := make(chan error, buyers*turns)
	var wg sync.WaitGroup
	for b := range buyers {
		m := lockers[b%len(lockers)]
		wg.Go(func() {
			for range turns {
				l, err := m.Lock(context.Background(), "hot", time.Second, 30*time.Second)
				if err != nil {
					errs <- err
					continue
				}
				n := inside.Add(1)
				for cur := most.Load(); n > cur && !most.CompareAndSwap(cur, n); cur = most.Load() {
				}
				if err := l.Context().Err(); err != nil {
					errs <- fmt.Errorf("the lock's context ended inside: %w", context.Cause(l.Context()))
				}
				time.Sleep(time.Millisecond) // the work
				inside.Add(-1)
				served.Add(1)
				if err := l.Release(context.Background()); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := most.Load(); got != 1 {
		t.Errorf("at most %d buyers were inside at once, want 1", got)
	}
	if got, want := served.Load(), int64(buyers*turns); got != want {
		t.Errorf("served %d turns, want %d", got, want)
	}
	if q := queueOf(t, z.Conn(), z, "hot"); len(q) != 0 {
		t.Errorf("queue left behind: %v", q)
	}
}

// TestNoHerd: waiters queued behind a holder each watch only the node
// before their own, so each release wakes one waiter: n waiters served one
// after the other look at the queue again n times in all, where a herd
// (every waiter watching the holder) would look n + (n-1) + ... + 1 times.
func TestNoHerd(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	m := newLocker(t, z, z.Servers(), 0)
	var c counter
	m.Observe(&c)
	ctx := context.Background()
	holder, err := m.Lock(ctx, "herd", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 8
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for range waiters {
		wg.Go(func() {
			l, err := m.Lock(ctx, "herd", time.Second, 30*time.Second)
			if err != nil {
				errs <- err
				return
			}
			errs <- l.Release(ctx)
		})
	}
	look := z.Conn()
	testenv.WaitFor(t, 10*time.Second, "every waiter queued", func() bool { return len(queueOf(t, look, z, "herd")) == waiters+1 })
	c.reset() // the looks from now on are the wake-ups
	release(t, holder)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := c.count(); got != waiters {
		t.Errorf("the waiters looked again %d times for %d releases, want %d (one wake-up per release)", got, waiters, waiters)
	}
}

// TestTryLock: a held key is not obtained at once (and TryLock leaves no
// node behind); a free one is.
func TestTryLock(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	a := newLocker(t, z, z.Servers(), 0)
	b := newLocker(t, z, z.Servers(), 0)
	ctx := context.Background()
	l, err := a.TryLock(ctx, "try", time.Second)
	if err != nil {
		t.Fatalf("TryLock on a free key: %v", err)
	}
	if _, err := b.TryLock(ctx, "try", time.Second); !errors.Is(err, dlock.ErrNotObtained) {
		t.Errorf("TryLock on a held key: %v, want ErrNotObtained", err)
	}
	if _, err := b.Lock(ctx, "try", time.Second, 0); !errors.Is(err, dlock.ErrTimeout) {
		t.Errorf("Lock with no wait on a held key: %v, want ErrTimeout", err)
	}
	if q := queueOf(t, z.Conn(), z, "try"); len(q) != 1 {
		t.Errorf("queue %v, want the holder's node alone", q)
	}
	release(t, l)
	l, err = b.TryLock(ctx, "try", time.Second)
	if err != nil {
		t.Fatalf("TryLock once released: %v", err)
	}
	release(t, l)
}

// TestWaitRunsOut: a Lock whose wait runs out answers dlock.ErrTimeout, as
// dlock's lockers do, not much later than the wait, and takes its node
// out of the queue.
func TestWaitRunsOut(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	m := newLocker(t, z, z.Servers(), 0)
	ctx := context.Background()
	holder, err := m.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const wait = 300 * time.Millisecond
	start := time.Now()
	_, err = m.Lock(ctx, "k", time.Second, wait)
	took := time.Since(start)
	if !errors.Is(err, dlock.ErrTimeout) {
		t.Fatalf("Lock behind a holder: %v, want ErrTimeout", err)
	}
	if took < wait || took > wait+time.Second {
		t.Errorf("Lock gave up after %v, want about %v", took, wait)
	}
	if q := queueOf(t, z.Conn(), z, "k"); len(q) != 1 || q[0] != holder.Token() {
		t.Errorf("queue %v after the wait ran out, want the holder's %s alone", q, holder.Token())
	}
	release(t, holder)
}

// TestCallerCancels: a waiter whose caller gives up returns at once with
// dlock.ErrTimeout wrapping context.Canceled, and leaves the queue.
func TestCallerCancels(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	m := newLocker(t, z, z.Servers(), 0)
	holder, err := m.Lock(context.Background(), "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Lock(ctx, "k", time.Second, time.Minute)
		done <- err
	}()
	look := z.Conn()
	testenv.WaitFor(t, 10*time.Second, "the waiter queued", func() bool { return len(queueOf(t, look, z, "k")) == 2 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, dlock.ErrTimeout) || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled Lock: %v, want ErrTimeout and context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled Lock did not return")
	}
	testenv.WaitFor(t, 5*time.Second, "the waiter's node gone", func() bool { return len(queueOf(t, look, z, "k")) == 1 })
	release(t, holder)
}
