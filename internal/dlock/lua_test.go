package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/redisopt"
)

// A lua acquire whose reply takes as long as the TTL has nothing left of
// the lock: TryLock reports it not obtained rather than handing out a
// handle with no validity and a live context.
func TestLuaAcquireReplyLaterThanTTLIsNotObtained(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("slow-reply")
		slowSet := newDelayHook(isAcquire, false, 250*time.Millisecond)
		a := hookedLocker(t, r, dlock.ModeLua, slowSet, 0)
		l, err := a.TryLock(ctx, key, 150*time.Millisecond)
		if err == nil {
			defer func() { _ = l.Release(ctx) }()
			v, live := l.Validity(), l.Context().Err() == nil
			_, otherErr := newLocker(t, r, dlock.ModeLua).TryLock(ctx, key, time.Second)
			t.Fatalf("TryLock with the SET's reply 250ms late and a 150ms TTL = a handle with Validity %v, context live %v; "+
				"another locker's TryLock then = %v (first context still live: %v); want ErrNotObtained",
				v, live, otherErr, l.Context().Err() == nil)
		}
		if !errors.Is(err, dlock.ErrNotObtained) {
			t.Errorf("TryLock with the SET's reply 250ms late and a 150ms TTL = %v, want ErrNotObtained", err)
		}
	})
}

// A lua acquire whose SET reaches Redis only after the TTL has passed got a
// key that is still there: TryLock reports it not obtained and removes it.
func TestLuaAcquireSentLaterThanTTLIsUndone(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("late-set")
		lateSet := newDelayHook(isAcquire, true, 700*time.Millisecond)
		a := hookedLocker(t, r, dlock.ModeLua, lateSet, 0)
		l, err := a.TryLock(ctx, key, 500*time.Millisecond)
		keys := r.Keys(0, key) // the key would live 500ms after the SET
		if err == nil {
			_ = l.Release(ctx)
			t.Errorf("TryLock with the SET sent 700ms late and a 500ms TTL = a handle with Validity %v, want ErrNotObtained", l.Validity())
		} else if !errors.Is(err, dlock.ErrNotObtained) {
			t.Errorf("TryLock with the SET sent 700ms late and a 500ms TTL = %v, want ErrNotObtained", err)
		}
		if len(keys) != 0 {
			t.Errorf("keys on node 0 right after TryLock returned: %v, want none (the late grant undone)", keys)
		}
	})
}

// A lua acquire whose SET lands late and whose reply comes too late for
// its TTL is undone (TryLock's "took >= ttl" branch). Between the SET
// landing and the undo, another process's head may have found the key held
// and gone to sleep until its fallback: the undo must announce that the
// key is free, or that head sleeps on for up to a second.
func TestLuaUndoOfLateAcquireWakesWaiters(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("undo")
		// A's SET is sent 1s late, so it lands at +1s with PX 1500 and the
		// key would live until +2.5s; its reply is held until B waits and
		// hears the key's releases, and at least 600ms, so that A finds
		// the acquire took its whole TTL and undoes it, at +1.6s or later.
		const ttl = 1500 * time.Millisecond
		lateSend := newDelayHook(isAcquire, true, time.Second)
		lateReply := newDelayHook(isAcquire, false, 600*time.Millisecond)
		lateReply.gate = make(chan struct{})
		cs := clients(t, r)
		cs[0].AddHook(lateSend)
		cs[0].AddHook(lateReply)
		a := dlock.NewLua(cs[0])
		t.Cleanup(func() { _ = a.Close() })
		b := newLocker(t, r, dlock.ModeLua)
		// The node knows the acquire script from now on: A's EVALSHA is
		// its acquire, not a NOSCRIPT answer held up before the EVAL.
		warm, err := b.TryLock(ctx, r.Key("undo-warm-up"), ttl)
		if err != nil {
			t.Fatal(err)
		}
		_ = warm.Release(ctx)

		aDone := make(chan time.Time, 1)
		go func() {
			_, err := a.TryLock(ctx, key, ttl)
			if !errors.Is(err, dlock.ErrNotObtained) {
				t.Errorf("A: TryLock = %v, want ErrNotObtained (undone)", err)
			}
			aDone <- time.Now()
		}()
		<-lateReply.first // A's SET has landed
		got := lockLater(ctx, b, key, 5*time.Second, 5*time.Second)
		waitHears(t, b, key)
		close(lateReply.gate)
		undone := <-aDone
		res := <-got
		if res.err != nil {
			t.Fatalf("B: Lock = %v", res.err)
		}
		defer res.l.Release(ctx)
		if d := res.at.Sub(undone); d > announcedWake {
			t.Errorf("A's undo freed the key, but B's waiter got it only %v later (its fallback sleep), want within %v",
				d.Round(time.Millisecond), announcedWake)
		}
	})
}

// A lua or fenced acquire that Redis ran but whose reply was lost (a read
// timeout, the caller's context still live) is reported as an error, and
// undone: nobody holds a handle to it, so the key must not stay behind
// for a whole TTL, keeping every other buyer out.
func TestLuaAcquireWhoseReplyIsLostIsUndone(t *testing.T) {
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

// A lua or fenced TryLock (or Lock) whose context ends while Redis hangs
// returns at about its deadline: the undo of the acquire that may have
// landed is given a node timeout, not the TTL. Redis answers here after 2s
// each way, a 4s round trip, within the 10s TTL.
func TestLuaReturnsAtItsDeadlineWhileRedisHangs(t *testing.T) {
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
