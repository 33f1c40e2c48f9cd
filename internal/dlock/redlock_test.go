package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// With two of five nodes down, a majority still grants, extends and
// releases the lock.
func TestRedlockMinorityDown(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("k")
		a, b := dlock.NewRedlock(clients(t, r)), dlock.NewRedlock(clients(t, r))
		t.Cleanup(func() { _, _ = a.Close(), b.Close() })
		r.Stop(0)
		r.Stop(1)

		l, err := a.TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("TryLock with 2 of 5 down = %v, want the lock", err)
		}
		_, err = b.TryLock(ctx, key, time.Second)
		var rerr *dlock.RedlockError
		if !errors.Is(err, dlock.ErrNotObtained) || !errors.As(err, &rerr) {
			t.Fatalf("second TryLock = %v, want a RedlockError wrapping ErrNotObtained", err)
		}
		if got := failedNodes(rerr); got != "node 0,node 1" {
			t.Errorf("failed nodes = %s, want node 0,node 1", got)
		}
		if err := l.Refresh(ctx, time.Second); err != nil {
			t.Errorf("Refresh with 2 of 5 down = %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release with 2 of 5 down = %v", err)
		}
		for i := 2; i < 5; i++ {
			if keys := r.Keys(i, key); len(keys) != 0 {
				t.Errorf("node %d keeps %v after Release", i, keys)
			}
		}
	})
}

// With three of five down there is no majority: TryLock and Lock fail at
// once with ErrUnavailable, naming the nodes, and leave no keys behind on
// the two live nodes.
func TestRedlockMajorityDown(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("k")
		rl := dlock.NewRedlock(clients(t, r))
		t.Cleanup(func() { _ = rl.Close() })
		for i := range 3 {
			r.Stop(i)
		}

		start := time.Now()
		_, err := rl.TryLock(ctx, key, time.Second)
		within(t, "TryLock with 3 of 5 down", time.Since(start), time.Second)
		var rerr *dlock.RedlockError
		if !errors.Is(err, dlock.ErrUnavailable) || !errors.As(err, &rerr) {
			t.Fatalf("TryLock with 3 of 5 down = %v, want a RedlockError wrapping ErrUnavailable", err)
		}
		if got := failedNodes(rerr); got != "node 0,node 1,node 2" {
			t.Errorf("failed nodes = %s, want node 0,node 1,node 2", got)
		}

		start = time.Now()
		_, err = rl.Lock(ctx, key, time.Second, 10*time.Second)
		within(t, "Lock with 3 of 5 down", time.Since(start), time.Second)
		if !errors.Is(err, dlock.ErrUnavailable) {
			t.Errorf("Lock with 3 of 5 down = %v, want ErrUnavailable at once", err)
		}
		for i := 3; i < 5; i++ {
			if keys := r.Keys(i, key); len(keys) != 0 {
				t.Errorf("node %d keeps %v after the failed attempts", i, keys)
			}
		}
	})
}

// The validity is the TTL less the time spent acquiring and the drift
// allowance: slow nodes shrink it.
func TestRedlockValidityShrinks(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		ttl := 2 * time.Second // per-node timeout 200ms
		delay := 20 * time.Millisecond
		rl := dlock.NewRedlock(clients(t, r))
		t.Cleanup(func() { _ = rl.Close() })
		for i := range r.Len() {
			r.SetDelay(i, delay)
		}

		l, err := rl.TryLock(ctx, r.Key("k"), ttl)
		if err != nil {
			t.Fatalf("TryLock with %v delay = %v", delay, err)
		}
		// A round trip through a slow node takes at least 2·delay; the
		// drift allowance is 1% of the TTL plus 2ms.
		drift := ttl/100 + 2*time.Millisecond
		if v, most := l.Validity(), ttl-2*delay-drift; v <= 0 || v > most {
			t.Errorf("Validity = %v, want in (0, %v]", v, most)
		}
		_ = l.Release(ctx)
	})
}

// A node slower than the per-node timeout does not stall the acquire.
func TestRedlockSlowNode(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		ttl := 500 * time.Millisecond // per-node timeout 100ms
		rl := dlock.NewRedlock(clients(t, r))
		t.Cleanup(func() { _ = rl.Close() })
		r.SetDelay(0, 2*time.Second)
		r.SetDelay(1, 2*time.Second)

		start := time.Now()
		l, err := rl.TryLock(ctx, r.Key("k"), ttl)
		within(t, "TryLock with 2 nodes 2s slow", time.Since(start), ttl)
		if err != nil {
			t.Fatalf("TryLock with 2 slow nodes = %v, want the lock", err)
		}
		_ = l.Release(ctx)

		r.SetDelay(2, 2*time.Second)
		start = time.Now()
		_, err = rl.TryLock(ctx, r.Key("k2"), ttl)
		within(t, "TryLock with 3 nodes 2s slow", time.Since(start), ttl)
		if !errors.Is(err, dlock.ErrUnavailable) {
			t.Errorf("TryLock with 3 slow nodes = %v, want ErrUnavailable", err)
		}
	})
}

// Ten processes TryLock the same free key at the same instant, as one user
// clicking ten times does with the shop's dedupe lock. Their votes may split
// so that nobody has a majority at first, but a split vote is retried:
// exactly one gets the lock, and the others are told it is held. (On a
// machine so loaded that nodes miss the per-node timeout, an attempt can
// fail with ErrUnavailable; that key then only shows that at most one won.)
func TestRedlockTryLockSplitVote(t *testing.T) {
	const contenders, keys = 10, 20
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		lockers := make([]*dlock.Redlock, contenders)
		for i := range lockers {
			lockers[i] = dlock.NewRedlock(clients(t, r))
			t.Cleanup(func() { _ = lockers[i].Close() })
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conclusive := 0
		for k := range keys {
			key := r.Key(fmt.Sprintf("split-%d", k))
			var won, held, slow atomic.Int64
			locks := make(chan *dlock.Lock, contenders)
			errs := make(chan error, contenders)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for _, rl := range lockers {
				wg.Go(func() {
					<-start
					l, err := rl.TryLock(ctx, key, 5*time.Second)
					switch {
					case err == nil:
						won.Add(1)
						locks <- l // held until every contender has answered
					case errors.Is(err, dlock.ErrNotObtained):
						held.Add(1)
					case errors.Is(err, dlock.ErrUnavailable) && errors.Is(err, context.DeadlineExceeded):
						slow.Add(1)
						t.Logf("key %d: nodes too slow: %v", k, err)
					default:
						errs <- err
					}
				})
			}
			close(start)
			wg.Wait()
			close(locks)
			close(errs)
			for l := range locks {
				_ = l.Release(ctx)
			}
			for err := range errs {
				t.Errorf("key %d: TryLock = %v, want the lock or ErrNotObtained", k, err)
			}
			switch got := won.Load(); {
			case slow.Load() == 0 && got != 1:
				t.Errorf("key %d: TryLocks that got the lock: got %d, want 1 (%d told it is held)",
					k, got, held.Load())
			case got > 1:
				t.Errorf("key %d: TryLocks that got the lock: got %d, want at most 1", k, got)
			case slow.Load() == 0:
				conclusive++
			}
		}
		if conclusive == 0 {
			t.Errorf("every key had nodes too slow to answer: nothing shown")
		}
	})
}

// failedNodes lists the nodes a RedlockError names, as "node 0,node 1".
func failedNodes(err *dlock.RedlockError) string {
	var names []string
	for _, n := range err.Nodes {
		names = append(names, strings.SplitN(n.Node, " (", 2)[0])
	}
	return strings.Join(names, ",")
}

// Redlock nodes whose SET ran but whose reply was lost hold a piece of
// the lock nobody counted. A grant (a majority answered) must release it
// there too; a failed acquire (a majority of replies lost) must undo it
// there before TryLock returns, or the next buyer finds the key held.
func TestRedlockLostGrantRepliesAreCleanedUp(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, lostOn := range [][]int{{4}, {0, 1, 2}} {
			t.Run(fmt.Sprint(lostOn), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key(fmt.Sprintf("lost-%d", len(lostOn)))
				lost := &lostReply{match: isAcquire}
				lost.on.Store(true)
				cs := clients(t, r)
				for _, i := range lostOn {
					cs[i].AddHook(lost)
				}
				a := dlock.NewRedlock(cs)
				defer func() { _ = a.Close() }()
				l, err := a.TryLock(ctx, key, 10*time.Second)
				granted := len(lostOn) < 3
				switch {
				case granted && err != nil:
					t.Fatalf("TryLock with %v's replies lost = %v, want a grant", lostOn, err)
				case !granted && err == nil:
					t.Fatalf("TryLock with %v's replies lost = a grant, want an error", lostOn)
				case granted:
					if err := l.Release(ctx); err != nil {
						t.Fatalf("Release: %v", err)
					}
				case !errors.Is(err, dlock.ErrUnavailable):
					t.Errorf("TryLock with %v's replies lost = %v, want ErrUnavailable", lostOn, err)
				}
				// A failed TryLock undoes every node before it returns; a
				// Release returns once a majority is free, the rest follow.
				for i, c := range r.Clients() {
					if granted {
						waitGone(t, c, key, 5*time.Second)
					} else if keys := r.Keys(i, key); len(keys) != 0 {
						t.Errorf("node %d still has %v after the failed TryLock returned", i, keys)
					}
				}
				if _, err := newLocker(t, r, dlock.ModeRedlock).TryLock(ctx, key, time.Second); err != nil {
					t.Errorf("another TryLock afterwards = %v, want a grant", err)
				}
			})
		}
	})
}
