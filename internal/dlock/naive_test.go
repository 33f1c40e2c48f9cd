package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Textbook failure 1: A outlives its TTL, B gets the lock, A's release
// deletes B's lock, and C gets in while B still works. Lua, in the same
// story, refuses A's release and keeps C out.
func TestNaiveReleaseDeletesNextHoldersLock(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("stock")
		ttl := 100 * time.Millisecond
		node := r.Clients()[0]

		a := dlock.NewNaive(r.Clients()[0])
		b := dlock.NewNaive(r.Clients()[0])
		c := dlock.NewNaive(r.Clients()[0])
		for _, l := range []*dlock.Naive{a, b, c} {
			t.Cleanup(func() { _ = l.Close() })
		}

		la, err := a.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatalf("A: TryLock: %v", err)
		}
		waitGone(t, node, key, 2*time.Second) // A is still working, its TTL has run out
		lb, err := b.TryLock(ctx, key, 5*time.Second)
		if err != nil {
			t.Fatalf("B: TryLock after A's TTL ran out: %v", err)
		}
		if err := la.Release(ctx); err != nil {
			t.Fatalf("A: Release = %v, want nil (naive's DEL deletes B's lock and says all is well)", err)
		}
		lc, err := c.TryLock(ctx, key, 5*time.Second)
		if err != nil {
			t.Fatalf("C: TryLock while B holds the lock: %v, want the flaw: C gets in", err)
		}
		if lb.Validity() == 0 || lc.Validity() == 0 {
			t.Errorf("B validity %v, C validity %v: want both believing they hold the lock", lb.Validity(), lc.Validity())
		}
		_ = lb.Release(ctx)
		_ = lc.Release(ctx)
	})
}

// Textbook failure 2: a process dies between SETNX and EXPIRE; the key has
// no TTL and blocks everyone, long after any TTL would have run out.
func TestNaiveCrashBetweenSetNXAndExpire(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("stock")
		ttl := 100 * time.Millisecond
		node := r.Clients()[0]

		crashed := dlock.NewNaive(r.Clients()[0])
		t.Cleanup(func() { _ = crashed.Close() })
		errCrash := errors.New("process killed")
		crashed.CrashBetweenSetNXAndExpire(func(context.Context, string) error { return errCrash })
		if _, err := crashed.TryLock(ctx, key, ttl); !errors.Is(err, errCrash) {
			t.Fatalf("TryLock with crash hook = %v, want it to wrap %v", err, errCrash)
		}
		pttl, err := node.Do(ctx, "PTTL", key).Int64()
		if err != nil {
			t.Fatal(err)
		}
		if pttl != -1 {
			t.Fatalf("PTTL %s = %d, want -1 (a key that never expires)", key, pttl)
		}

		other := dlock.NewNaive(r.Clients()[0])
		t.Cleanup(func() { _ = other.Close() })
		time.Sleep(3 * ttl)
		if _, err := other.TryLock(ctx, key, ttl); !errors.Is(err, dlock.ErrNotObtained) {
			t.Errorf("TryLock 3×TTL after the crash = %v, want ErrNotObtained", err)
		}
		if _, err := other.Lock(ctx, key, ttl, 2*ttl); !errors.Is(err, dlock.ErrTimeout) {
			t.Errorf("Lock 3×TTL after the crash = %v, want ErrTimeout", err)
		}
	})
}

// Naive has no renewal: Refresh says so rather than extending a lock that
// may not be ours.
func TestNaiveRefreshUnsupported(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		n := dlock.NewNaive(r.Clients()[0])
		t.Cleanup(func() { _ = n.Close() })
		l, err := n.TryLock(ctx, r.Key("k"), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Refresh(ctx, time.Second); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Refresh = %v, want errors.ErrUnsupported", err)
		}
		if got := l.Token(); got != "1" {
			t.Errorf("Token = %q, want the constant \"1\"", got)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release = %v", err)
		}
	})
}
