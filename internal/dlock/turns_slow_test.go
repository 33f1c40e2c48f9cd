package dlock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// A process in turns whose round trip to Redis is longer than a turn used
// to last (20 ms) still gets its turns: a turn is handed out for as long as
// the room it goes to needs (twice its measured round trip, plus 20 ms),
// and a room whose turn lapsed all the same keeps its place in line. Three
// processes, each of which has taken the key once (so that it knows its
// round trip), take it in turns until they have made 150 grants: with one
// of them 30 ms slow to send its acquire, or with all of them 16 ms away
// from Redis. Once queued (its acquire has landed: the grants made while
// it is on the way are not a wait in line), a process waits for the two
// others' turns, 2 grants; the bound, 6, leaves room for a turn of another
// process that lapses (a pause of the machine longer than the turn lets
// the grant go to whoever asks first, and that room then keeps its place
// ahead). A slow room used to rejoin at the back after each lapse: it got
// 0 or 1 of 300 grants, and with Redis 16 ms away a process waited 14 to
// 16 grants.
func TestInTurnsASlowProcessKeepsItsPlace(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		const grants, bound = 150, 6
		t.Run("one-slow", func(t *testing.T) {
			cs := clients(t, r)
			cs[0].AddHook(newDelayHook(isAcquireScript, true, 30*time.Millisecond))
			tries := &countHits{match: isAcquireScript} // the slow process's acquires answered
			cs[0].AddHook(tries)
			slow := dlock.NewLua(cs[0])
			t.Cleanup(func() { _ = slow.Close() })
			lockers := [3]dlock.Locker{
				dlock.InTurns(newLocker(t, r, dlock.ModeLua)),
				dlock.InTurns(slow),
				dlock.InTurns(newLocker(t, r, dlock.ModeLua)),
			}
			order := turnsRun(t, lockers, r.Key("slow-turn"), grants, &tries.hits)
			w := longestQueuedWait(order, 1)
			t.Logf("grants per process %v; process 1, 30 ms slow, waited at most %d grants once queued", perProcess(order), w)
			if w > bound {
				t.Errorf("the process 30 ms slow waited %d grants in line for the key, want at most %d", w, bound)
			}
		})
		t.Run("redis-far", func(t *testing.T) {
			var lockers [3]dlock.Locker
			for p := range lockers {
				lockers[p] = dlock.InTurns(newLocker(t, r, dlock.ModeLua))
			}
			r.SetDelay(0, 16*time.Millisecond)
			defer r.SetDelay(0, 0)
			order := turnsRun(t, lockers, r.Key("far-turns"), grants, nil)
			for p := range lockers {
				w := longestQueuedWait(order, p)
				t.Logf("grants per process %v; process %d waited at most %d grants", perProcess(order), p, w)
				if w > bound {
					t.Errorf("with Redis 16 ms away, process %d waited %d grants for the key, want at most %d", p, w, bound)
				}
			}
		})
	})
}

// grant is one grant of a turnsRun: the process it went to, and how many
// of the slow process's acquires had answered by then.
type grant struct {
	p     int
	tries int64
}

// turnsRun has processes in turns, one waiter each, take key and release
// it after a millisecond, as TestInTurns does, until they have made grants
// grants between them; the locker of process i is lockers[i]. It returns
// the grants in order, each marked with tries, or with its own number if
// tries is nil (every process counts as queued at once). A Lock may wait
// 20s: the bound is on grants, not time.
func turnsRun(t *testing.T, lockers [3]dlock.Locker, key string, grants int, tries *atomic.Int64) (order []grant) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for p, lk := range lockers { // each takes the key once: it knows its round trip
		l, err := lk.TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("process %d: TryLock: %v", p, err)
		}
		_ = l.Release(ctx)
	}
	if tries != nil {
		tries.Store(0)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for p := range lockers {
		wg.Go(func() {
			for ctx.Err() == nil {
				l, err := lockers[p].Lock(ctx, key, time.Second, 20*time.Second)
				if err != nil {
					if ctx.Err() == nil || !errors.Is(err, dlock.ErrTimeout) {
						t.Errorf("process %d: Lock: %v", p, err)
					}
					return
				}
				mu.Lock()
				g := grant{p: p, tries: int64(len(order) + 1)} // inside the lock: the grants' true order
				if tries != nil {
					g.tries = tries.Load()
				}
				order = append(order, g)
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
	return order
}

// perProcess counts the grants to each process.
func perProcess(order []grant) (n [3]int) {
	for _, g := range order {
		n[g.p]++
	}
	return n
}

// longestQueuedWait is the most grants to others in a row that process p
// saw while it was queued: after an acquire of its own answered (the
// grant's tries went past what they were at p's last grant), and until
// its next grant or the run's end.
func longestQueuedWait(order []grant, p int) int {
	longest, run, last := 0, 0, int64(0)
	for _, g := range order {
		switch {
		case g.p == p:
			run, last = 0, g.tries
		case g.tries > last:
			run++
			longest = max(longest, run)
		}
	}
	return longest
}
