package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Redlock nodes whose SET ran but whose reply was lost hold a piece of
// the lock nobody counted. A grant (a majority answered) must release it
// there too; a failed acquire (a majority of replies lost) must undo it
// there before TryLock returns, or the next buyer finds the key held.
func TestAttack45RedlockLostGrantRepliesAreCleanedUp(t *testing.T) {
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
				for i := range r.Len() {
					if keys := r.Keys(i, key); len(keys) != 0 {
						t.Errorf("node %d still has %v after TryLock (granted %v) and Release returned", i, keys, granted)
					}
				}
				if _, err := newLocker(t, r, dlock.ModeRedlock).TryLock(ctx, key, time.Second); err != nil {
					t.Errorf("another TryLock afterwards = %v, want a grant", err)
				}
			})
		}
	})
}

// countHits counts the commands match picks that have answered.
type countHits struct {
	match func(redis.Cmder) bool
	hits  atomic.Int64
}

func (h *countHits) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countHits) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.match(cmd) {
			h.hits.Add(1)
		}
		return err
	}
}

func (h *countHits) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A Redlock holder that got the key by waiting releases it quietly (the
// fairness rule, in the middle of its run) while one node of five is slow.
// A majority releases at once, so the lock is free; but the quiet release
// is announced only after the whole release round, slow node included,
// and then by publishing on the nodes one after the other within one
// second, the slow node first: the other process's waiter hears nothing,
// and gets the key only at its fallback, a second later, instead of at
// once. (A release that is not quiet is announced by each node's script
// and wakes it at once.)
func TestAttack45RedlockQuietReleaseWithASlowNodeIsHeard(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, quiet := range []bool{false, true} {
			t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key(fmt.Sprintf("slow-node-release-%v", quiet))
				const ttl = 30 * time.Second
				a := newLocker(t, r, dlock.ModeRedlock)
				tries := &countHits{match: isAcquire}
				cs := clients(t, r)
				cs[1].AddHook(tries)
				b := dlock.NewRedlock(cs)
				defer func() { _ = b.Close() }()

				var held *dlock.Lock
				if quiet {
					// A waits for B's key, so that A listens to it; then A
					// holds it, got by waiting, the first of its run: its
					// release is quiet.
					first, err := b.TryLock(ctx, key, ttl)
					if err != nil {
						t.Fatal(err)
					}
					gotA := lockLater(ctx, a, key, ttl, 10*time.Second)
					waitHears(t, a, key)
					if err := first.Release(ctx); err != nil {
						t.Fatal(err)
					}
					wa := <-gotA
					if wa.err != nil {
						t.Fatalf("A: Lock: %v", wa.err)
					}
					held = wa.l
				} else {
					var err error
					if held, err = a.TryLock(ctx, key, ttl); err != nil { // a TryLock's release is always announced
						t.Fatal(err)
					}
				}
				// B waits for it, hears its releases, and has just been
				// refused (its fallback is a second away).
				gotB := lockLater(ctx, b, key, ttl, 20*time.Second)
				waitHears(t, b, key)
				n := tries.hits.Load()
				testenv.WaitFor(t, 3*time.Second, "B's head to try again", func() bool { return tries.hits.Load() > n })

				r.SetDelay(0, 1500*time.Millisecond)
				released := time.Now()
				go func() { _ = held.Release(ctx) }()
				wb := <-gotB
				r.SetDelay(0, 0)
				if wb.err != nil {
					t.Fatalf("B: Lock: %v", wb.err)
				}
				defer func() { _ = wb.l.Release(ctx) }()
				if took := wb.at.Sub(released); took > 400*time.Millisecond {
					t.Errorf("B got the key %v after A's release began (a majority released it at once), want well under 400ms: "+
						"the release (quiet %v) with node 0 slow was not announced", took.Round(time.Millisecond), quiet)
				}
			})
		}
	})
}

// One Redlock node of five hangs (answers 3s late). A majority releases a
// lock at once, so anybody may take it; but Release waits for the hung
// node too, up to the rest of the validity, and only then tells the
// waiting room: the next waiter of the same process sleeps on behind a
// holder that is gone, for the whole release round. With the shop's
// ReleaseTimeout (2s), every grant in a process then costs 2s.
func TestAttack45RedlockHungMinorityNodeStallsLocalHandOff(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("hung-minority")
		const ttl = 30 * time.Second
		x := newLocker(t, r, dlock.ModeRedlock)
		b := newLocker(t, r, dlock.ModeRedlock)
		first, err := x.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		g1 := lockLater(ctx, b, key, ttl, 10*time.Second)
		waitQueued(t, b, key, 1)
		g2 := lockLater(ctx, b, key, ttl, 20*time.Second)
		waitQueued(t, b, key, 2)
		if err := first.Release(ctx); err != nil {
			t.Fatal(err)
		}
		w1 := <-g1
		if w1.err != nil {
			t.Fatalf("first waiter: %v", w1.err)
		}
		r.SetDelay(0, 1500*time.Millisecond)
		defer r.SetDelay(0, 0)
		released := time.Now()
		go func() { _ = w1.l.Release(ctx) }()
		w2 := <-g2
		r.SetDelay(0, 0)
		if w2.err != nil {
			t.Fatalf("second waiter: %v", w2.err)
		}
		defer func() { _ = w2.l.Release(ctx) }()
		if took := w2.at.Sub(released); took > 500*time.Millisecond {
			t.Errorf("the second waiter of the process got the key %v after the first began its release (a majority released it at once), "+
				"want well under 500ms: the room waits for the hung node's answer", took.Round(time.Millisecond))
		}
	})
}
