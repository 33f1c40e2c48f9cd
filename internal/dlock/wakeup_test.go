package dlock_test

// Wake-ups and fairness in cases a second cold review attacked: an undone
// acquire, and a Redlock node down under contention.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/testenv"
)

// A lua acquire whose SET lands late and whose reply comes too late for
// its TTL is undone (TryLock's "took >= ttl" branch). Between the SET
// landing and the undo, another process's head may have found the key held
// and gone to sleep until its fallback: the undo must announce that the
// key is free, or that head sleeps on for up to a second.
func TestLuaUndoOfLateAcquireWakesWaiters(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("undo")
		// A's SET is sent 300ms late and its reply comes 200ms late: it
		// lands at +300ms with PX 400, and the undo runs at about +500ms,
		// while the key would live until +700ms.
		lateSend := newDelayHook(isAcquire, true, 300*time.Millisecond)
		lateReply := newDelayHook(isAcquire, false, 200*time.Millisecond)
		cs := clients(t, r)
		cs[0].AddHook(lateSend)
		cs[0].AddHook(lateReply)
		a := dlock.NewLua(cs[0])
		t.Cleanup(func() { _ = a.Close() })
		b := newLocker(t, r, dlock.ModeLua)

		aDone := make(chan time.Time, 1)
		go func() {
			_, err := a.TryLock(ctx, key, 400*time.Millisecond)
			if !errors.Is(err, dlock.ErrNotObtained) {
				t.Errorf("A: TryLock = %v, want ErrNotObtained (undone)", err)
			}
			aDone <- time.Now()
		}()
		<-lateSend.first
		time.Sleep(350 * time.Millisecond) // A's SET has landed; its undo comes at ~+500ms
		got := lockLater(ctx, b, key, 5*time.Second, 5*time.Second)
		undone := <-aDone
		res := <-got
		if res.err != nil {
			t.Fatalf("B: Lock = %v", res.err)
		}
		defer res.l.Release(ctx)
		if d := res.at.Sub(undone); d > 150*time.Millisecond {
			t.Errorf("A's undo freed the key, but B's waiter got it only %v later (its fallback sleep), want within 150ms",
				d.Round(time.Millisecond))
		}
	})
}

// Fairness between three redlock processes after one node goes down while
// they contend: the gap clears every key's confirmed flag, and with the
// node down nothing sets it again, so no run-ending release is waited for
// (expectRelease) and the releaser's next head races the others' heads
// before they have even heard the release.
func TestRedlockFairnessAfterNodeDown(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("fair-down")
		const processes = 3
		var lockers [processes]dlock.Locker
		for p := range lockers {
			lockers[p] = newLocker(t, r, dlock.ModeRedlock)
		}
		var counts [processes]atomic.Int64
		var counting atomic.Bool
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for p := range processes {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					l, err := lockers[p].Lock(ctx, key, time.Second, 10*time.Second)
					if err != nil {
						t.Errorf("Lock: %v", err)
						return
					}
					if counting.Load() {
						counts[p].Add(1)
					}
					time.Sleep(time.Millisecond)
					_ = l.Release(ctx)
				}
			})
		}
		time.Sleep(500 * time.Millisecond) // every process listens and is confirmed
		r.Stop(4)
		defer r.Start(4)
		time.Sleep(200 * time.Millisecond) // the gap has been seen
		counting.Store(true)
		time.Sleep(1500 * time.Millisecond)
		close(stop)
		wg.Wait()
		var got [processes]int64
		var all int64
		for p := range counts {
			got[p] = counts[p].Load()
			all += got[p]
		}
		t.Logf("acquisitions per process with node 4 down: %v", got)
		for p, n := range got {
			if n*2*processes < all {
				t.Errorf("process %d got %d of %d acquisitions, under half its fair share", p, n, all)
			}
		}
	})
}
