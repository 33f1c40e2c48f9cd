package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/redisopt"
)

// A lua or fenced acquire that Redis ran but whose reply was lost (a read
// timeout, the caller's context still live) is reported as unavailable:
// nobody holds a handle to it, so the key must not stay behind for a whole
// TTL, keeping every other buyer out. The acquire is undone when ctx ended
// (lua.go's try: "the SET may have landed all the same"); a lost reply is
// the same doubt and must be undone the same way.
func TestAttack45AcquireWhoseReplyIsLostIsUndone(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeLua, dlock.ModeFenced} {
			t.Run(string(mode), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("lost-reply-" + string(mode))
				lost := &lostReply{match: isAcquireScript}
				lost.on.Store(true)
				cs := clients(t, r)
				cs[0].AddHook(lost)
				a, err := dlock.New(mode, cs)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = a.Close() }()
				const ttl = 10 * time.Second
				l, err := a.TryLock(ctx, key, ttl)
				if err == nil {
					_ = l.Release(ctx)
					t.Fatalf("TryLock whose reply was lost = a handle, want an error")
				}
				if lost.hits.Load() != 1 {
					t.Fatalf("the acquire ran %d times, want 1", lost.hits.Load())
				}
				lost.on.Store(false)
				b := newLocker(t, r, mode)
				other, err := b.TryLock(ctx, key, time.Second)
				if err == nil {
					_ = other.Release(ctx)
					return
				}
				pttl, _ := r.Clients()[0].PTTL(ctx, key).Result()
				t.Errorf("after a TryLock whose reply was lost, another TryLock = %v: "+
					"the key stays held by a token nobody has, for another %v of its %v TTL", err, pttl.Round(time.Millisecond), ttl)
			})
		}
	})
}

// A release by a handle whose lease ran out and was granted to another
// holder leaves the new holder's key alone, for a handle got by TryLock
// and for one got by waiting (whose release goes through the waiting
// room's quiet release and turns).
func TestAttack45StaleReleaseKeepsNewHoldersKey(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			for _, waited := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/waited=%v", mode, waited), func(t *testing.T) {
					ctx := context.Background()
					key := r.Key(fmt.Sprintf("stale-%s-%v", mode, waited))
					a, b := newLocker(t, r, mode), newLocker(t, r, mode)
					const ttl = 200 * time.Millisecond
					var old *dlock.Lock
					var err error
					if waited {
						old, err = dlock.InTurns(a).Lock(ctx, key, ttl, time.Second)
					} else {
						old, err = a.TryLock(ctx, key, ttl)
					}
					if err != nil {
						t.Fatalf("A: %v", err)
					}
					old.HoldRenewals(time.Minute) // A's network stalls: its lease runs out
					<-old.Context().Done()
					var cur *dlock.Lock
					testenv.WaitFor(t, 5*time.Second, "B to take the key after A's lease ran out", func() bool {
						cur, err = b.TryLock(ctx, key, 5*time.Second)
						return err == nil
					})
					defer func() { _ = cur.Release(ctx) }()
					if err := old.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
						t.Errorf("A's Release after B took the key = %v, want ErrNotHeld", err)
					}
					if n, of := tokenOn(t, r, mode, key, cur.Token()); n <= of/2 {
						t.Errorf("after A's stale Release, B's token is on %d of %d nodes, want a majority", n, of)
					}
					if _, err := newLocker(t, r, mode).TryLock(ctx, key, time.Second); !errors.Is(err, dlock.ErrNotObtained) {
						t.Errorf("a third TryLock while B holds the key = %v, want ErrNotObtained", err)
					}
				})
			}
		}
	})
}

// A refresh that was on the wire when its holder released, and lands after
// another holder took the key, must not touch the new holder's key: not
// the watchdog's renewal (Release waits for it only until its context is
// cancelled) and not a caller's Refresh. The stale refresh asks for a
// short TTL; the new holder's key must keep its own.
func TestAttack45RefreshLandingAfterReleaseLeavesNextHolder(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			for _, who := range []string{"watchdog", "Refresh"} {
				t.Run(string(mode)+"/"+who, func(t *testing.T) {
					ctx := context.Background()
					key := r.Key("late-refresh-" + string(mode) + who)
					late := newLateLanding(isRefresh(t))
					cs := clients(t, r)
					for _, i := range allNodes(mode) {
						cs[i].AddHook(late) // one refresh held, on one node
					}
					a, err := dlock.New(mode, cs)
					if err != nil {
						t.Fatal(err)
					}
					defer func() { _ = a.Close() }()
					const ttl = 600 * time.Millisecond
					l, err := a.TryLock(ctx, key, ttl)
					if err != nil {
						t.Fatal(err)
					}
					refreshed := make(chan error, 1)
					if who == "Refresh" {
						go func() { refreshed <- l.Refresh(ctx, 300*time.Millisecond) }()
					}
					<-late.sent // the watchdog's renewal is due at ttl/3
					released := make(chan error, 1)
					go func() { released <- l.Release(ctx) }()
					select {
					case err := <-released:
						if err != nil {
							t.Fatalf("Release: %v", err)
						}
					case <-time.After(5 * time.Second):
						close(late.gate)
						t.Fatalf("Release hung behind a refresh on the wire")
					}
					b := newLocker(t, r, mode)
					cur, err := b.TryLock(ctx, key, 30*time.Second)
					if err != nil {
						close(late.gate)
						t.Fatalf("B: TryLock after A's Release: %v", err)
					}
					defer func() { _ = cur.Release(ctx) }()
					close(late.gate)
					<-late.landed
					for i, c := range lockNodes(r, mode) {
						if pttl, err := c.PTTL(ctx, key).Result(); err == nil && pttl < 10*time.Second && pttl != -2 {
							t.Errorf("node %d: B's key has a PTTL of %v after A's stale refresh landed, want B's 30s", i, pttl)
						}
					}
					if who == "Refresh" && mode != dlock.ModeRedlock { // Redlock's Refresh had a majority before the Release
						if err := <-refreshed; err == nil {
							t.Errorf("A's Refresh that landed after B took the key = nil, want an error")
						}
					}
				})
			}
		}
	})
}

// Fences are handed out in grant order: with several processes and
// goroutines contending, and leases running out under the holders now and
// then (some holders stall), the fences seen inside the lock, in the order
// the holders entered it, only increase.
func TestAttack45FencesIncreaseInGrantOrder(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("fence-order")
		var lockers []dlock.Locker
		for range 3 {
			lockers = append(lockers, newLocker(t, r, dlock.ModeFenced))
		}
		var mu sync.Mutex
		var seen []int64
		var wg sync.WaitGroup
		for g := range 9 {
			wg.Go(func() {
				for i := range 15 {
					l, err := lockers[g%3].Lock(ctx, key, 100*time.Millisecond, 10*time.Second)
					if err != nil {
						t.Errorf("Lock: %v", err)
						return
					}
					mu.Lock() // inside the lock: entries in grant order
					seen = append(seen, l.Fence())
					mu.Unlock()
					if i%5 == 4 { // this holder stalls: its lease runs out under it
						l.HoldRenewals(time.Minute)
						<-l.Context().Done()
					}
					_ = l.Release(ctx)
				}
			})
		}
		wg.Wait()
		for i := 1; i < len(seen); i++ {
			if seen[i] <= seen[i-1] {
				t.Errorf("entry %d into the lock carried fence %d after fence %d: fences out of grant order", i, seen[i], seen[i-1])
			}
		}
	})
}

// A lua or fenced TryLock (or Lock) whose context ends while Redis hangs
// returns when its context ends, not a TTL later: the undo of an acquire
// that may have landed (lua.go's undo) runs on a context of its own,
// bounded by the TTL, and the caller waits for it. Redis answers here
// after 2s each way, a 4s round trip, within the 10s TTL: the caller whose
// deadline was 300ms waits 4.3s.
func TestAttack45LuaCallReturnsAtItsDeadlineWhileRedisHangs(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeLua, dlock.ModeFenced} {
			for _, how := range []string{"TryLock", "Lock"} {
				t.Run(string(mode)+"/"+how, func(t *testing.T) {
					key := r.Key("hang-" + string(mode) + how)
					c := redis.NewClient(redisopt.Client(r.Addrs()[0], redisopt.Settings{DialTimeout: time.Second, ContextTimeout: true}))
					defer func() { _ = c.Close() }()
					if err := c.Ping(context.Background()).Err(); err != nil {
						t.Fatal(err)
					}
					l, err := dlock.NewSingle(mode, c)
					if err != nil {
						t.Fatal(err)
					}
					defer func() { _ = l.Close() }()
					r.SetDelay(0, 2*time.Second)
					defer r.SetDelay(0, 0)
					ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
					defer cancel()
					start := time.Now()
					var lk *dlock.Lock
					if how == "TryLock" {
						lk, err = l.TryLock(ctx, key, 10*time.Second)
					} else {
						lk, err = l.Lock(ctx, key, 10*time.Second, 5*time.Second)
					}
					took := time.Since(start)
					if err == nil {
						_ = lk.Release(context.Background())
						t.Fatalf("%s with Redis hung = a handle", how)
					}
					if took > time.Second {
						t.Errorf("%s with a 300ms deadline and Redis hung returned after %v (%v), want at about 300ms", how, took.Round(time.Millisecond), err)
					}
				})
			}
		}
	})
}
