package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// safeModes are the modes that must never let two holders in at once.
var safeModes = []dlock.Mode{dlock.ModeLua, dlock.ModeRedlock, dlock.ModeFenced}

// timedModes is safeModes in the full run and redlock alone under -short,
// for the tests that wait out a TTL or a renewal once per mode: redlock's
// path (five nodes, a quorum, the drift term) has the most to get wrong.
func timedModes() []dlock.Mode {
	return testenv.Short([]dlock.Mode{dlock.ModeRedlock}, safeModes)
}

// newLocker returns a locker of mode on a fresh set of clients, as another
// process would have, closed when t ends.
func newLocker(t *testing.T, r *testenv.RedisNodes, mode dlock.Mode) dlock.Locker {
	t.Helper()
	l, err := dlock.New(mode, clients(t, r))
	if err != nil {
		t.Fatalf("New(%s): %v", mode, err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// clients returns a fresh set of clients, each with a connection already
// open, like a process that has been running for a while: on a loaded
// machine, dialling can take longer than a Redlock node's timeout, and the
// tests are not about a cold start.
func clients(t *testing.T, r *testenv.RedisNodes) []*redis.Client {
	t.Helper()
	cs := r.Clients()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i, c := range cs {
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("node %d: PING: %v", i, err)
		}
	}
	return cs
}

// lockNodes returns the clients the mode's key lives on: the first node for
// naive, lua and fenced, all five for redlock.
func lockNodes(r *testenv.RedisNodes, mode dlock.Mode) []*redis.Client {
	cs := r.Clients()
	if mode == dlock.ModeRedlock {
		return cs
	}
	return cs[:1]
}

// tokenOn counts the nodes of mode's key on which key holds token, out of
// all of them: a majority of them means the token's holder has the lock.
func tokenOn(t *testing.T, r *testenv.RedisNodes, mode dlock.Mode, key, token string) (holding, of int) {
	t.Helper()
	nodes := lockNodes(r, mode)
	for _, node := range nodes {
		if got, _ := node.Get(context.Background(), key).Result(); got == token {
			holding++
		}
	}
	return holding, len(nodes)
}

// contention is a crowd of goroutines, spread over several processes (each
// a locker on its own clients), each taking the same key once and doing
// read-sleep-write on a shared counter inside.
type contention struct {
	goroutines, processes int
	ttl, wait, work       time.Duration
	stopOnOverlap         bool // cancel the rest once two holders were seen inside at once
}

// outcome counts what a contention run saw.
type outcome struct {
	acquired int64 // goroutines that got the lock
	overlaps int64 // times a goroutine entered while another was inside
	counter  int64 // the shared counter; lost updates show overlaps too
	errs     []error
}

func (c contention) run(t *testing.T, r *testenv.RedisNodes, mode dlock.Mode) outcome {
	t.Helper()
	lockers := make([]dlock.Locker, c.processes)
	for i := range lockers {
		lockers[i] = newLocker(t, r, mode)
	}
	key := r.Key("counter")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var inside, overlaps, acquired, counter atomic.Int64
	errs := make(chan error, c.goroutines)
	var wg sync.WaitGroup
	for g := range c.goroutines {
		wg.Go(func() {
			lk, err := lockers[g%c.processes].Lock(ctx, key, c.ttl, c.wait)
			if err != nil {
				errs <- err
				return
			}
			acquired.Add(1)
			if inside.Add(1) > 1 {
				overlaps.Add(1)
				if c.stopOnOverlap {
					cancel()
				}
			}
			// Read, work, write back: an unprotected critical section
			// loses updates. Atomics, because the race detector cannot see
			// the ordering a Redis lock provides.
			v := counter.Load()
			time.Sleep(c.work)
			counter.Store(v + 1)
			inside.Add(-1)
			if err := lk.Release(context.Background()); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	out := outcome{acquired: acquired.Load(), overlaps: overlaps.Load(), counter: counter.Load()}
	for err := range errs {
		out.errs = append(out.errs, err)
	}
	return out
}

// waitGone polls until key is gone from c (its TTL ran out), or fails t.
func waitGone(t *testing.T, c *redis.Client, key string, within time.Duration) {
	t.Helper()
	testenv.WaitFor(t, within, "key "+key+" gone", func() bool {
		n, err := c.Exists(context.Background(), key).Result()
		if err != nil {
			t.Fatalf("EXISTS %s: %v", key, err)
		}
		return n == 0
	})
}

// dlockGoroutines counts the goroutines running code of package dlock (not
// its tests).
func dlockGoroutines() int { return goroutinesIn("flashsale/internal/dlock.") }

// goroutinesIn counts the goroutines with a frame whose name contains fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			count++
		}
	}
	return count
}

// within fails t unless d is at most limit: for "returned promptly".
func within(t *testing.T, what string, d, limit time.Duration) {
	t.Helper()
	if d > limit {
		t.Errorf("%s took %v, want at most %v", what, d, limit)
	}
}

// acquired is what a Lock started by lockLater came back with, and when.
type acquired struct {
	l   *dlock.Lock
	err error
	at  time.Time
}

// lockLater starts locker.Lock(ctx, key, ttl, wait) in a goroutine and
// returns the channel its outcome arrives on, stamped with the time it
// returned.
func lockLater(ctx context.Context, locker dlock.Locker, key string, ttl, wait time.Duration) <-chan acquired {
	got := make(chan acquired, 1)
	go func() {
		l, err := locker.Lock(ctx, key, ttl, wait)
		got <- acquired{l, err, time.Now()}
	}()
	return got
}

// pollTake has other try to take key every 20ms for d, and returns the lock
// and when it got it, or nil if it never did. Errors other than
// ErrNotObtained fail t.
func pollTake(t *testing.T, other dlock.Locker, key string, d time.Duration) (*dlock.Lock, time.Time) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		l, err := other.TryLock(context.Background(), key, 5*time.Second)
		if err == nil {
			return l, time.Now()
		}
		if !errors.Is(err, dlock.ErrNotObtained) {
			t.Fatalf("second locker: TryLock = %v, want the lock or ErrNotObtained", err)
		}
	}
	return nil, time.Time{}
}

// endedBy waits at most limit for ctx to end and returns when it had ended
// (now, if it already had), or the zero time if it is still live.
func endedBy(ctx context.Context, limit time.Duration) time.Time {
	select {
	case <-ctx.Done():
		return time.Now()
	case <-time.After(limit):
		return time.Time{}
	}
}

// lateBy says how long after taken the context ended, or "over limit".
func lateBy(ended, taken time.Time, limit time.Duration) string {
	if ended.IsZero() {
		return "over " + limit.String()
	}
	return ended.Sub(taken).Round(time.Millisecond).String()
}

// announcedWake bounds how long after a release a waiter that hears the
// key may take to have the lock: it shows that the release's announcement
// woke it, and not its fallback, a sleep of a second (maxSleep) from its
// last refusal, while leaving a busy machine's scheduler its hiccups (a
// hand-off of 129 ms was seen under -race with a core taken). The usual
// hand-off takes a few milliseconds; TestRedlockHandOffWakesWaiterPromptly
// holds the median to that.
const announcedWake = 400 * time.Millisecond

// waitHears waits until a goroutine of l waits for key and hears its next
// release (dlock.Hears): a release from then on must wake it at once.
func waitHears(t *testing.T, l any, key string) {
	t.Helper()
	testenv.WaitFor(t, 20*time.Second, "a waiter that hears "+key+"'s releases", func() bool { return dlock.Hears(l, key) })
}

// waitQueued waits until n goroutines of l wait for key (dlock.Queued).
func waitQueued(t *testing.T, l any, key string, n int) {
	t.Helper()
	testenv.WaitFor(t, 20*time.Second, fmt.Sprintf("%d waiters queued for %s", n, key), func() bool { return dlock.Queued(l, key) == n })
}

// handOff has waiter Lock key in a goroutine, waits until it hears the
// key's releases, releases held, and returns how long after the release
// the waiter got it.
func handOff(t *testing.T, waiter dlock.Locker, key string, ttl time.Duration, held *dlock.Lock) (*dlock.Lock, time.Duration) {
	t.Helper()
	ctx := context.Background()
	got := lockLater(ctx, waiter, key, ttl, 30*time.Second)
	waitHears(t, waiter, key)
	if err := held.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	released := time.Now()
	r := <-got
	if r.err != nil {
		t.Fatalf("waiter Lock: %v", r.err)
	}
	return r.l, r.at.Sub(released)
}
