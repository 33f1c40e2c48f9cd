package dlock_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Three processes with one waiter each, as a batch's leader is (it serves
// everybody its process queued, releases, and asks again at once), take a
// lua or fenced key in turns when they ask for turns (InTurns): the grant
// after a release goes to another process nearly every time. In a race
// (plain Lock, or Redlock, which has no turns), the releasing process
// often wins again: it went back to it seven times in eight.
func TestInTurns(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeLua, dlock.ModeFenced} {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("turns-" + string(mode))
				const processes, grants = 3, 150
				var lockers [processes]dlock.Locker
				for p := range lockers {
					lockers[p] = dlock.InTurns(newLocker(t, r, mode))
				}
				var mu sync.Mutex
				var order []int // the process of each grant, in grant order
				errs := make(chan error, processes)
				var wg sync.WaitGroup
				for p := range processes {
					wg.Go(func() {
						for {
							l, err := lockers[p].Lock(ctx, key, time.Second, 10*time.Second)
							if err != nil {
								errs <- err
								return
							}
							mu.Lock()
							order = append(order, p) // inside the lock: the grants' true order
							n := len(order)
							mu.Unlock()
							time.Sleep(time.Millisecond)
							if err := l.Release(ctx); err != nil {
								errs <- err
								return
							}
							if n >= grants {
								return
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatalf("Lock or Release: %v", err)
				}
				again, longest, wait := 0, 0, map[int]int{}
				for i, p := range order {
					if i > 0 && p == order[i-1] {
						again++
					}
					if last, ok := wait[p]; ok {
						longest = max(longest, i-last-1) // grants to others between two of p's
					}
					wait[p] = i
				}
				share := float64(again) / float64(len(order)-1)
				t.Logf("%d grants; the next went to the same process %.2f of the time; the longest a process waited: %d grants", len(order), share, longest)
				// In turns, a process waits for the two others, and not
				// longer unless a turn lapsed (20 ms: a slow machine).
				if share > 0.25 {
					t.Errorf("the grant after a release went back to the releasing process %.2f of the time, want at most 0.25: no turns", share)
				}
			})
		}
	})
}

// A plain waiter (not InTurns) on a key that two processes in turns keep
// taking and releasing every couple of milliseconds joins the turns once
// it is refused, and is handed the key in its turn: it gets it every time,
// well within its wait. (Had it only respected the turns, every release
// would have gone to the other two, and it would have timed out.)
func TestPlainWaiterBesideTurns(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		key := r.Key("beside-turns")
		ctx, cancel := context.WithCancel(context.Background())
		var taken atomic.Int64 // grants to the processes in turns
		var wg sync.WaitGroup
		for range 2 {
			lk := dlock.InTurns(newLocker(t, r, dlock.ModeLua))
			wg.Go(func() {
				for ctx.Err() == nil {
					l, err := lk.Lock(ctx, key, time.Second, 5*time.Second)
					if err != nil {
						continue
					}
					taken.Add(1)
					time.Sleep(2 * time.Millisecond)
					_ = l.Release(context.Background())
				}
			})
		}
		defer wg.Wait()
		defer cancel()
		testenv.WaitFor(t, 20*time.Second, "20 grants to the processes in turns", func() bool { return taken.Load() >= 20 })
		plain := newLocker(t, r, dlock.ModeLua)
		for i := range 5 {
			l, err := plain.Lock(ctx, key, time.Second, 2*time.Second)
			if err != nil {
				t.Fatalf("plain Lock %d beside two processes in turns: %v", i+1, err)
			}
			_ = l.Release(context.Background())
		}
	})
}

// A waiter refused in a turn's last millisecond, when the turn's PTTL says
// 0, tries again as soon as it lapses: it must not take the 0 for "no turn"
// and sleep until a lock of its TTL would expire (nothing announces a
// lapsed turn). Each try hands a free key to a room that does not exist,
// for a millisecond, just before the Lock.
func TestWaiterRefusedInATurnsLastMillisecond(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		c := r.Clients()[0]
		const ttl = 4 * time.Second
		for _, lk := range []dlock.Locker{newLocker(t, r, dlock.ModeLua), dlock.InTurns(newLocker(t, r, dlock.ModeLua))} {
			for i := range 30 {
				key := r.Key(fmt.Sprintf("last-ms-%d", i))
				if err := c.Set(ctx, key+":next", "no-such-room", time.Millisecond).Err(); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				l, err := lk.Lock(ctx, key, ttl, 2*ttl)
				if err != nil {
					t.Fatalf("Lock: %v", err)
				}
				_ = l.Release(ctx)
				if took := time.Since(start); took > ttl/4 {
					t.Fatalf("Lock of a free key behind a 1 ms turn took %v: it slept as if the key were held", took.Round(time.Millisecond))
				}
			}
		}
	})
}

// inTurnsOf waits until n rooms wait in key's turns on c.
func inTurnsOf(t *testing.T, c *redis.Client, key string, n int64) {
	t.Helper()
	testenv.WaitFor(t, 20*time.Second, fmt.Sprintf("%d rooms in %s's turns", n, key), func() bool {
		got, err := c.ZCard(context.Background(), key+":turns").Result()
		return err == nil && got == n
	})
}

// During a rolling deploy, the room of a binary older than the windows in
// the turns' scores is scored by the microsecond it asked at (Redis TIME):
// its last three digits are no window. A release hands such a room the
// 20 ms turn that binary hands out, not up to 999 ms.
func TestTurnOfARoomOfAnOlderBinary(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("older-room")
		c := r.Clients()[0]
		held, err := newLocker(t, r, dlock.ModeLua).TryLock(ctx, key, 10*time.Second)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		asked := float64(time.Now().UnixMilli()*1000 + 999) // microseconds that happen to end in 999
		if err := c.ZAdd(ctx, key+":turns", redis.Z{Score: asked, Member: "older-room"}).Err(); err != nil {
			t.Fatal(err)
		}
		if err := held.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if turn := c.Get(ctx, key+":next").Val(); turn != "older-room" {
			t.Fatalf("the release handed the key to %q, want older-room", turn)
		}
		if left := c.PTTL(ctx, key+":next").Val(); left > 20*time.Millisecond {
			t.Errorf("the turn handed to an older binary's room lasts %v, want at most 20ms", left)
		}
	})
}

// A room that joins a key's turns after Redis's clock stepped back (its
// place in line is Redis TIME) queues behind the rooms already in line,
// and does not jump ahead of them. A real Redis's clock cannot be moved
// from a test; miniredis's TIME can.
func TestTurnsAfterRedisClockSteppedBack(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		if r.Mode() == testenv.Real {
			t.Skip("a real Redis's clock cannot be moved from a test")
		}
		ctx := context.Background()
		key := r.Key("clock-back")
		c := r.Clients()[0]
		held, err := newLocker(t, r, dlock.ModeLua).TryLock(ctx, key, 10*time.Second)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		first := lockLater(ctx, dlock.InTurns(newLocker(t, r, dlock.ModeLua)), key, 10*time.Second, time.Minute)
		inTurnsOf(t, c, key, 1)
		// An hour back, and there it stays: setting it forward again would
		// expire every key at once, and nothing below waits for a TTL.
		r.Embedded().Node(0).SetTime(time.Now().Add(-time.Hour))
		second := lockLater(ctx, dlock.InTurns(newLocker(t, r, dlock.ModeLua)), key, 10*time.Second, time.Minute)
		inTurnsOf(t, c, key, 2)
		if err := held.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		var a acquired
		select {
		case a = <-first:
			if a.err == nil {
				_ = a.l.Release(ctx)
			}
			a = <-second
		case a = <-second:
			t.Error("the room that joined after Redis's clock stepped back an hour got the key first")
			if a.err == nil {
				_ = a.l.Release(ctx)
			}
			a = <-first
		}
		if a.err != nil {
			t.Fatalf("Lock: %v", a.err)
		}
		_ = a.l.Release(ctx)
	})
}
