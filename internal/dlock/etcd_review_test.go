package dlock_test

// Regression tests from a cold review of the etcd lock: a waiter gave up
// its place at the first "no leader" from its watch, even with one member
// of three down; Lock overran its wait and its caller's deadline by the
// lease's TTL when it left the queue without a quorum; Release with a
// context that never ends retried forever. The cluster is the embedded
// one: its members stop and start for real (testenv's real members can
// only hang).

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/testenv"
)

// startAll restarts members concurrently (a lone member cannot rejoin).
func startAll(c *testenv.EtcdCluster, members ...int) {
	var wg sync.WaitGroup
	for _, i := range members {
		wg.Go(func() { c.Start(i) })
	}
	wg.Wait()
}

// A waiter with a long wait should ride out a short loss of quorum (the
// doc: ErrUnavailable only "when the cluster does not answer within the
// wait"). Quorum is gone for ~1.5s of a 20s wait.
func TestEtcdWaiterRidesOutQuorumLoss(t *testing.T) {
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

// With one member of three down the lock works (TestEtcdQuorum): that
// includes the waiters queued when the leader is the one that stops.
func TestEtcdWaitersSurviveLeaderStop(t *testing.T) {
	c := testenv.NewEtcd(t, testenv.Embedded)
	ctx := context.Background()
	failures := 0
	for round := range 2 {
		key := c.Key("leader-stop-" + string(rune('a'+round)))
		held, err := etcdLocker(t, c).TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		const n = 6
		var gots []<-chan acquired
		for i := range n {
			gots = append(gots, lockLater(ctx, etcdLocker(t, c), key, time.Second, 20*time.Second))
			waitQueued(t, c, key, i+2)
		}
		leader := leaderIndex(t, c)
		start := time.Now()
		c.Stop(leader)
		time.Sleep(time.Second)
		_ = held.Release(ctx)
		for i, g := range gots {
			select {
			case a := <-g:
				if a.err != nil {
					failures++
					t.Errorf("round %d: waiter %d, leader (member %d) stopped: %v after %v", round, i, leader, a.err,
						time.Since(start).Round(time.Millisecond))
					continue
				}
				a.l.Release(ctx)
			case <-time.After(15 * time.Second):
				t.Fatalf("round %d: waiter %d not served", round, i)
			}
		}
		startAll(c, leader)
	}
	t.Logf("%d waiters failed", failures)
}

func leaderIndex(t *testing.T, c *testenv.EtcdCluster) int {
	t.Helper()
	cl := c.Client()
	for i, ep := range c.Endpoints() {
		s, err := cl.Status(context.Background(), ep)
		if err == nil && s.Leader == s.Header.MemberId {
			return i
		}
	}
	t.Fatal("no leader found")
	return -1
}

// Lock must return within its wait (and never past ctx's deadline). A
// waiter whose wait ends while the quorum is gone blocks in leave for the
// lease's TTL instead.
func TestEtcdLockKeepsItsWaitWithoutQuorum(t *testing.T) {
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

// Release on a cluster without quorum should answer (ErrUnavailable, "the
// lock expires after its TTL") rather than retry forever.
func TestEtcdReleaseWithoutQuorumAnswers(t *testing.T) {
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

// Chaos: goroutines in three processes take the key in turn while members
// stop and start one at a time (the quorum stays). Holders whose Context
// was live from entry to exit must never overlap, and fences must grow in
// the order of entry. And every Lock call gets the key: the wait is a
// bound on liveness, not a latency goal, so it is generous (a waiter that
// lost its wake-up never returns before its wait ends, however long), and
// so is the lease (a 1 s lease renewed in 250 ms tries runs out when a
// busy machine starves the three members sharing this process).
func TestEtcdExclusionUnderMemberChurn(t *testing.T) {
	const churnTTL, churnWait = 2 * time.Second, 10 * time.Second
	c := testenv.NewEtcd(t, testenv.Embedded)
	ctx := context.Background()
	key := c.Key("churn")
	lockers := []*dlock.Etcd{etcdLocker(t, c), etcdLocker(t, c), etcdLocker(t, c)}
	type span struct {
		fence      int64
		in, out    time.Time
		liveAtExit bool
	}
	var mu sync.Mutex
	var spans []span
	errs := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				l, err := lockers[i%3].Lock(ctx, key, churnTTL, churnWait)
				if err != nil {
					mu.Lock()
					s := err.Error()
					if len(s) > 140 {
						s = s[:140]
					}
					errs[s]++
					mu.Unlock()
					continue
				}
				in := time.Now()
				time.Sleep(2 * time.Millisecond)
				live := l.Context().Err() == nil
				out := time.Now()
				mu.Lock()
				spans = append(spans, span{l.Fence(), in, out, live})
				mu.Unlock()
				_ = l.Release(ctx)
			}
		})
	}
	for round := range 3 {
		m := round % 3
		time.Sleep(1500 * time.Millisecond)
		c.Stop(m)
		time.Sleep(1500 * time.Millisecond)
		c.Start(m)
	}
	close(stop)
	wg.Wait()
	overlaps, backwards := 0, 0
	for i := range spans {
		for j := range spans {
			a, b := spans[i], spans[j]
			if i == j || !a.liveAtExit || !b.liveAtExit {
				continue
			}
			if a.in.Before(b.in) && b.in.Before(a.out) {
				overlaps++
				t.Errorf("overlap: fence %d [%v] and fence %d entered inside it", a.fence, a.out.Sub(a.in), b.fence)
			}
			if a.in.Before(b.in) && a.fence >= b.fence {
				backwards++
			}
		}
	}
	t.Logf("%d grants, %d overlaps, %d fence inversions, errors: %v", len(spans), overlaps, backwards, errs)
	if backwards > 0 {
		t.Errorf("%d fence inversions", backwards)
	}
	for e, n := range errs {
		t.Errorf("%d Lock calls (%v wait) failed with one member of three down at most: %s", n, churnWait, e)
	}
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && dlockGoroutines() > 0; time.Sleep(50 * time.Millisecond) {
	}
	if n := dlockGoroutines(); n > 0 {
		t.Errorf("%d dlock goroutines left", n)
	}
}
