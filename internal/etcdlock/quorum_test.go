package etcdlock_test

// Most tests here run on the embedded cluster alone: its members stop and
// start for real, where testenv can only pause a real member (SIGSTOP).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// With one member of three down the lock works; with two, Lock answers
// ErrUnavailable within its wait and leaves nothing behind; once a member
// is back, it works again.
func TestEtcdQuorum(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		ctx := context.Background()
		key := c.Key("quorum")
		c.Reserve()
		m := etcdLocker(t, c)
		c.Stop(0)
		l, err := m.Lock(ctx, key, time.Second, 5*time.Second)
		if err != nil {
			t.Fatalf("one of three down: %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatalf("one of three down: Release: %v", err)
		}
		c.Stop(1)
		wait := 500 * time.Millisecond
		start := time.Now()
		_, err = m.Lock(ctx, key, time.Second, wait)
		if !errors.Is(err, dlock.ErrUnavailable) {
			t.Errorf("two of three down: Lock = %v, want ErrUnavailable", err)
		}
		if took := time.Since(start); took > wait+time.Second {
			t.Errorf("two of three down: Lock took %v, wait %v", took, wait)
		}
		c.Start(1)
		l, err = m.Lock(ctx, key, time.Second, 5*time.Second)
		if err != nil {
			t.Fatalf("quorum back: %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("quorum back: Release: %v", err)
		}
		c.Start(0)
	})
}

// TryLock on a cluster that has lost its quorum gives up after a few tries
// with ErrUnavailable, even when its context has no deadline.
func TestEtcdTryLockWithoutQuorum(t *testing.T) {
	testenv.SkipShort(t, "TryLock without a quorum; TestEtcdQuorum checks Lock without one")
	c := testenv.NewEtcd(t, testenv.Embedded)
	m := etcdLocker(t, c)
	c.Stop(0)
	c.Stop(1)
	start := time.Now()
	_, err := m.TryLock(context.Background(), c.Key("no-quorum"), time.Second)
	if !errors.Is(err, dlock.ErrUnavailable) {
		t.Errorf("TryLock without a quorum = %v, want ErrUnavailable", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("TryLock without a quorum took %v", took)
	}
}

// A waiter rides out a short loss of quorum: Lock returns ErrUnavailable
// only when the cluster does not answer within the wait. Here the quorum
// is gone for about 1.5s of a 20s wait.
func TestEtcdWaiterRidesOutQuorumLoss(t *testing.T) {
	testenv.SkipShort(t, "a waiter through a quorum loss; TestEtcdQuorum checks Lock without a quorum and after")
	c := testenv.NewEtcd(t, testenv.Embedded)
	ctx := context.Background()
	key := c.Key("blip")
	held, err := etcdLocker(t, c).TryLock(ctx, key, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := lockLater(ctx, etcdLocker(t, c), key, time.Second, 20*time.Second)
	waitQueued(t, c, key, 2)
	c.Stop(0)
	c.Stop(1)
	time.Sleep(1500 * time.Millisecond)
	startAll(c, 0, 1)
	t.Logf("quorum back after %v", time.Since(start).Round(time.Millisecond))
	select {
	case a := <-got:
		if a.l != nil {
			a.l.Release(ctx)
		}
		t.Fatalf("the waiter (20s wait) returned after %v, during/just after a 1.5s quorum loss: %v",
			time.Since(start).Round(time.Millisecond), a.err)
	default:
	}
	_ = held.Release(ctx)
	select {
	case a := <-got:
		if a.err != nil {
			t.Fatalf("waiter: %v", a.err)
		}
		a.l.Release(ctx)
	case <-time.After(10 * time.Second):
		t.Fatal("waiter not served 10s after the release")
	}
}

// Lock returns within its wait, and never past ctx's deadline, also when
// the wait ends while the quorum is gone: leaving the queue, which cannot
// get through then, does not hold it up for the lease's TTL.
func TestEtcdLockKeepsItsWaitWithoutQuorum(t *testing.T) {
	testenv.SkipShort(t, "the wait running out during a quorum loss; TestEtcdQuorum checks Lock's wait without a quorum")
	c := testenv.NewEtcd(t, testenv.Embedded)
	ctx := context.Background()
	key := c.Key("overrun")
	const ttl, wait = 10 * time.Second, time.Second
	held, err := etcdLocker(t, c).TryLock(ctx, key, ttl)
	if err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second) // a deadline too
	defer cancel()
	m := etcdLocker(t, c)
	var took time.Duration
	var lerr error
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		var l *dlock.Lock
		l, lerr = m.Lock(dctx, key, ttl, wait)
		took = time.Since(start)
		if l != nil {
			l.Release(ctx)
		}
	}()
	waitQueued(t, c, key, 2)
	c.Stop(0)
	c.Stop(1)
	<-done
	t.Logf("Lock(wait %v, ctx deadline 3s) returned after %v: %v", wait, took.Round(time.Millisecond), lerr)
	if took > wait+time.Second {
		t.Errorf("Lock took %v, wait %v: it overran its wait (and ctx's deadline: %v)", took.Round(time.Millisecond), wait, took > 3*time.Second)
	}
	startAll(c, 0, 1)
	_ = held.Release(ctx)
}

// Release on a cluster without a quorum, with a context that never ends,
// answers ErrUnavailable after about a lease's length, when the lock runs
// out by itself anyway.
func TestEtcdReleaseWithoutQuorumAnswers(t *testing.T) {
	testenv.SkipShort(t, "Release without a quorum waits about a lease; TestEtcdQuorum checks Lock without one")
	c := testenv.NewEtcd(t, testenv.Embedded)
	ctx := context.Background()
	key := c.Key("release")
	l, err := etcdLocker(t, c).TryLock(ctx, key, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Stop(0)
	c.Stop(1)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- l.Release(ctx) }()
	select {
	case err := <-done:
		t.Logf("Release returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
		if !errors.Is(err, dlock.ErrUnavailable) {
			t.Errorf("Release without quorum: %v, want ErrUnavailable", err)
		}
	case <-time.After(8 * time.Second):
		t.Errorf("Release(context.Background()) without quorum still running after 8s (lease TTL 1s)")
		startAll(c, 0, 1)
		err := <-done
		t.Logf("Release returned %v after %v, once the quorum was back", err, time.Since(start).Round(time.Millisecond))
		return
	}
	startAll(c, 0, 1)
}
