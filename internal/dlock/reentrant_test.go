package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// newReentrant returns a reentrant locker on node 0, on a fresh client as
// another process would have, closed when t ends.
func newReentrant(t *testing.T, r *testenv.RedisNodes) *dlock.Reentrant {
	t.Helper()
	m := dlock.NewReentrant(clients(t, r)[0])
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// holds returns owner's count of holds on key ("" if it has none) and
// whether the key exists.
func holds(t *testing.T, c *redis.Client, key, owner string) (string, bool) {
	t.Helper()
	ctx := context.Background()
	n, err := c.Exists(ctx, key).Result()
	if err != nil {
		t.Fatalf("EXISTS %s: %v", key, err)
	}
	v, err := c.HGet(ctx, key, owner).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("HGET %s %s: %v", key, owner, err)
	}
	return v, n == 1
}

// The same owner acquires twice without waiting; the key counts two holds;
// the first release keeps the key, the second deletes it.
func TestReentrantNesting(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("nested")
		node := r.Clients()[0]
		m := newReentrant(t, r)
		req := m.As("req-1")

		outer, err := req.TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		// A Locker's Lock would wait for the outer hold (renewed by its
		// watchdog) until its wait ran out; the owner's nests at once.
		start := time.Now()
		inner, err := req.Lock(ctx, key, time.Second, 5*time.Second)
		if err != nil {
			t.Fatalf("nested Lock: %v", err)
		}
		within(t, "nested Lock", time.Since(start), 500*time.Millisecond)
		for _, l := range []*dlock.Lock{outer, inner} {
			if got, want := l.Token(), "req-1"; got != want {
				t.Errorf("Token = %q, want %q (the owner)", got, want)
			}
		}
		if got, _ := holds(t, node, key, "req-1"); got != "2" {
			t.Errorf("holds after two acquires = %q, want 2", got)
		}
		if _, err := m.As("req-2").TryLock(ctx, key, time.Second); !errors.Is(err, dlock.ErrNotObtained) {
			t.Errorf("TryLock by another owner = %v, want ErrNotObtained", err)
		}

		if err := inner.Release(ctx); err != nil {
			t.Fatalf("inner Release = %v", err)
		}
		if got, exists := holds(t, node, key, "req-1"); !exists || got != "1" {
			t.Errorf("after the inner release: key exists %v with holds %q, want true with 1", exists, got)
		}
		if outer.Context().Err() != nil {
			t.Errorf("outer Context ended by the inner release: %v", context.Cause(outer.Context()))
		}
		if err := outer.Release(ctx); err != nil {
			t.Fatalf("outer Release = %v", err)
		}
		if _, exists := holds(t, node, key, "req-1"); exists {
			t.Error("key still there after the last release, want it deleted")
		}
		if err := outer.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
			t.Errorf("second Release = %v, want ErrNotHeld", err)
		}
	})
}

// Holds can be released in any order: the outer before the inner ones,
// the key staying until the last.
func TestReentrantReleaseOrder(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("order")
		node := r.Clients()[0]
		m := newReentrant(t, r)
		req, other := m.As("req-1"), m.As("req-2")

		var ls []*dlock.Lock // outermost first
		for i := range 3 {
			l, err := req.TryLock(ctx, key, time.Second)
			if err != nil {
				t.Fatalf("acquire %d: %v", i+1, err)
			}
			ls = append(ls, l)
		}
		// Outer, then innermost, then middle.
		for i, n := range []int{0, 2, 1} {
			if err := ls[n].Release(ctx); err != nil {
				t.Fatalf("release of hold %d = %v", n+1, err)
			}
			left := len(ls) - 1 - i
			got, exists := holds(t, node, key, "req-1")
			if left > 0 {
				if want := string(rune('0' + left)); !exists || got != want {
					t.Errorf("after releasing hold %d: key exists %v with holds %q, want true with %s", n+1, exists, got, want)
				}
				if _, err := other.TryLock(ctx, key, time.Second); !errors.Is(err, dlock.ErrNotObtained) {
					t.Errorf("after releasing hold %d: TryLock by another owner = %v, want ErrNotObtained", n+1, err)
				}
			} else if exists {
				t.Errorf("after releasing every hold: key still there with holds %q, want it deleted", got)
			}
		}
		l, err := other.TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("TryLock by another owner after the last release = %v, want the key", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release = %v", err)
		}
	})
}

// A hold that is not renewed (its context ended, so its watchdog stopped)
// expires, nested or not; releasing it then returns ErrNotHeld, and
// another owner gets the key.
func TestReentrantExpiry(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("expired")
		ttl := 300 * time.Millisecond
		m := newReentrant(t, r)
		req := m.As("req-1")

		cctx, stall := context.WithCancel(ctx)
		outer, err := req.TryLock(cctx, key, ttl)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		inner, err := req.TryLock(cctx, key, ttl)
		if err != nil {
			t.Fatalf("nested TryLock: %v", err)
		}
		stall()
		waitGone(t, r.Clients()[0], key, 10*ttl)

		if err := inner.Refresh(ctx, ttl); !errors.Is(err, dlock.ErrNotHeld) {
			t.Errorf("Refresh of an expired hold = %v, want ErrNotHeld", err)
		}
		for name, l := range map[string]*dlock.Lock{"inner": inner, "outer": outer} {
			if err := l.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
				t.Errorf("%s Release of an expired hold = %v, want ErrNotHeld", name, err)
			}
		}
		other, err := m.As("req-2").TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatalf("TryLock by another owner after the expiry = %v, want the key", err)
		}
		if err := other.Release(ctx); err != nil {
			t.Errorf("Release = %v", err)
		}
	})
}

// The watchdog keeps a nested hold alive past three TTLs, also after the
// outer hold was released; and no hold shortens the key's TTL.
func TestReentrantWatchdog(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("watched")
		ttl := 300 * time.Millisecond
		node := r.Clients()[0]
		m := newReentrant(t, r)
		req, other := m.As("req-1"), newReentrant(t, r).As("req-2")

		outer, err := req.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		inner, err := req.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatalf("nested TryLock: %v", err)
		}
		time.Sleep(ttl)
		if err := outer.Release(ctx); err != nil {
			t.Fatalf("outer Release = %v", err)
		}
		for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(ttl / 5) {
			if err := inner.Context().Err(); err != nil {
				t.Fatalf("nested hold's context ended while held: %v", context.Cause(inner.Context()))
			}
			if _, err := other.TryLock(ctx, key, ttl); !errors.Is(err, dlock.ErrNotObtained) {
				t.Fatalf("TryLock by another owner during the work = %v, want ErrNotObtained", err)
			}
		}
		if got, _ := holds(t, node, key, "req-1"); got != "1" {
			t.Errorf("holds after 3 TTLs = %q, want 1", got)
		}

		// A short hold nested in a long one leaves the long TTL in place.
		long, err := req.TryLock(ctx, key, time.Minute)
		if err != nil {
			t.Fatalf("TryLock for a minute: %v", err)
		}
		short, err := req.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatalf("nested TryLock for %v: %v", ttl, err)
		}
		if err := short.Refresh(ctx, ttl); err != nil {
			t.Errorf("Refresh = %v", err)
		}
		if left := node.PTTL(ctx, key).Val(); left < 30*time.Second {
			t.Errorf("PTTL after a %v hold nested in a minute's = %v, want about a minute", ttl, left)
		}
		for _, l := range []*dlock.Lock{short, long, inner} {
			if err := l.Release(ctx); err != nil {
				t.Errorf("Release = %v", err)
			}
		}
		if _, exists := holds(t, node, key, "req-1"); exists {
			t.Error("key still there after the last release, want it deleted")
		}
	})
}

// An acquire needs an owner and a TTL Redis can count.
func TestReentrantBadArguments(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		m := newReentrant(t, r)
		if l, err := m.As("").TryLock(ctx, r.Key("k"), time.Second); err == nil {
			_ = l.Release(ctx)
			t.Error("TryLock with an empty owner = nil error, want an error")
		}
		if _, err := m.As("req-1").Lock(ctx, r.Key("k"), time.Microsecond, time.Second); err == nil {
			t.Error("Lock with a 1µs TTL = nil error, want an error")
		}
		if got, want := m.As("req-1").Owner(), "req-1"; got != want {
			t.Errorf("Owner = %q, want %q", got, want)
		}
	})
}
