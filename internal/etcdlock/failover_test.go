package etcdlock_test

// These tests run on the embedded cluster alone: its members stop and
// start for real, where testenv can only pause a real member (SIGSTOP).

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// With one member of three down the lock works (TestEtcdQuorum): that
// includes the waiters queued when the leader is the one that stops.
func TestEtcdWaitersSurviveLeaderStop(t *testing.T) {
	testenv.SkipShort(t, "two rounds of leader stops under queued waiters; TestEtcdQuorum checks the lock with a member down")
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

// Chaos: goroutines in three processes take the key in turn while members
// stop and start one at a time (the quorum stays). Holders whose Context
// was live from entry to exit must never overlap, and fences must grow in
// the order of entry. And every Lock call gets the key: the wait is a
// bound on liveness, not a latency goal, so it is generous (a waiter that
// lost its wake-up never returns before its wait ends, however long), and
// so is the lease (a 1 s lease renewed in 250 ms tries runs out when a
// busy machine starves the three members sharing this process).
func TestEtcdExclusionUnderMemberChurn(t *testing.T) {
	testenv.SkipShort(t, "twelve lockers through three member restarts; TestEtcdQuorum checks the lock with a member down")
	const churnTTL, churnWait = 2 * time.Second, 10 * time.Second
	c := testenv.NewEtcd(t, testenv.Embedded)
	ctx := context.Background()
	key := c.Key("churn")
	lockers := []*etcdlock.Locker{etcdLocker(t, c), etcdLocker(t, c), etcdLocker(t, c)}
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
	testenv.WaitFor(t, 3*time.Second, "no goroutine of etcdlock or dlock left", func() bool { return lockGoroutines() == 0 })
}
