package dlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// turnsRun has three processes in turns (InTurns), one waiter each, take
// key and release it after a millisecond, as TestInTurns does, until they
// have made grants grants between them; the locker of process i is
// lockers[i]. It returns the process of each grant, in grant order, and
// how many Locks of each process timed out (waiting wait).
func turnsRun(t *testing.T, lockers [3]dlock.Locker, key string, grants int, wait time.Duration) (order []int, timeouts [3]int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for p := range lockers {
		wg.Go(func() {
			for ctx.Err() == nil {
				l, err := lockers[p].Lock(ctx, key, time.Second, wait)
				if errors.Is(err, dlock.ErrTimeout) && ctx.Err() == nil {
					mu.Lock()
					timeouts[p]++
					mu.Unlock()
					continue
				}
				if err != nil && ctx.Err() == nil {
					t.Errorf("process %d: Lock: %v", p, err)
					return
				} else if err != nil {
					return
				}
				mu.Lock()
				order = append(order, p)
				if len(order) >= grants {
					cancel()
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
				_ = l.Release(context.Background())
			}
		})
	}
	wg.Wait()
	return order, timeouts
}

// A process in turns whose acquire takes longer to reach Redis than a
// handed-out turn lasts (20 ms: a client 15 ms away, or a GC pause) is
// handed the key in its turn and never gets it: its turn lapses on the
// way, it is refused, and it joins the turns again at the back. The turns
// promise first come, first served; the slow process should get about a
// third of the grants, as its two fast rivals do. It gets almost none,
// and its Locks time out.
func TestAttack45SlowProcessLosesEveryTurn(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		key := r.Key("slow-turn")
		slow := newDelayHook(isAcquireScript, true, 30*time.Millisecond)
		lockers := [3]dlock.Locker{
			dlock.InTurns(newLocker(t, r, dlock.ModeLua)),
			dlock.InTurns(hookedLocker(t, r, dlock.ModeLua, slow, 0)),
			dlock.InTurns(newLocker(t, r, dlock.ModeLua)),
		}
		order, timeouts := turnsRun(t, lockers, key, 300, time.Second)
		var got [3]int
		for _, p := range order {
			got[p]++
		}
		t.Logf("grants per process %v (process 1 is 30 ms slow to reach Redis), timeouts %v", got, timeouts)
		if share := float64(got[1]) / float64(len(order)); share < 0.15 || timeouts[1] > 0 {
			t.Errorf("in turns, the process 30 ms away got %d of %d grants (%.2f) and timed out %d times waiting 1s; "+
				"want about a third and no timeout: its turns lapse before its acquire arrives", got[1], len(order), share, timeouts[1])
		}
	})
}

// The same with every process as far from Redis: a round trip of 32 ms or
// more (16 ms each way). Every handed-out turn lapses before the room it
// was handed to can use it, and the grants go back to racing: a process
// waits for more than the two others' grants (TestInTurns's promise).
func TestAttack45TurnsLapseWhenRedisIsFar(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		key := r.Key("far-turns")
		var lockers [3]dlock.Locker
		for p := range lockers {
			lockers[p] = dlock.InTurns(newLocker(t, r, dlock.ModeLua))
		}
		r.SetDelay(0, 16*time.Millisecond)
		defer r.SetDelay(0, 0)
		order, timeouts := turnsRun(t, lockers, key, 60, 5*time.Second)
		again, longest, last := 0, 0, map[int]int{}
		for i, p := range order {
			if i > 0 && p == order[i-1] {
				again++
			}
			if j, ok := last[p]; ok {
				longest = max(longest, i-j-1)
			}
			last[p] = i
		}
		share := float64(again) / float64(len(order)-1)
		t.Logf("%d grants, the next to the same process %.2f of the time, the longest a process waited %d grants, timeouts %v",
			len(order), share, longest, timeouts)
		if longest > 2 {
			t.Errorf("with Redis 16 ms away, a process in turns waited for %d grants to others (the next to the releasing process %.2f of the time), "+
				"want at most 2, the two others' turns: the 20 ms turn lapses before its room can take it", longest, share)
		}
	})
}
