package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/zklock"
)

// TestHandle: a handle refreshes while its node is there, for the
// session's validity; Release works once, after which Refresh and Release
// answer ErrNotHeld and the Context has ended.
func TestHandle(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	m := newLocker(t, z, z.Servers(), 0)
	ctx := context.Background()
	l, err := m.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if v := l.Validity(); v <= 0 || v > m.SessionTimeout() {
		t.Errorf("Validity() = %v after the grant, want within (0, %v]", v, m.SessionTimeout())
	}
	if err := l.Refresh(ctx, time.Second); err != nil {
		t.Errorf("Refresh: %v", err)
	}
	if v := l.Validity(); v <= m.SessionTimeout()/2 {
		t.Errorf("Validity() = %v after a refresh, want more than half the %v session", v, m.SessionTimeout())
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if l.Context().Err() == nil {
		t.Error("the Context is live after Release")
	}
	if err := l.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Errorf("second Release: %v, want ErrNotHeld", err)
	}
	if err := l.Refresh(ctx, time.Second); !errors.Is(err, dlock.ErrNotHeld) {
		t.Errorf("Refresh after Release: %v, want ErrNotHeld", err)
	}
}

// TestAbandon: an abandoned lock keeps others out for one session
// timeout, as a holder that stopped would, then lets them in.
func TestAbandon(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	m := newLocker(t, z, z.Servers(), time.Second)
	other := newLocker(t, z, z.Servers(), 0)
	ctx := context.Background()
	l, err := m.Lock(ctx, "k", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	l.Abandon()
	next, err := other.Lock(ctx, "k", time.Second, 10*time.Second)
	if err != nil {
		t.Fatalf("Lock after Abandon: %v", err)
	}
	if took := time.Since(start); took < m.SessionTimeout() {
		t.Errorf("an abandoned lock let the next holder in after %v, before the %v session timeout", took, m.SessionTimeout())
	}
	release(t, next)
}

// TestNewRejects: bad servers or options are an ErrConfig at once; an
// ensemble that does not answer is ErrUnavailable once ctx ends.
func TestNewRejects(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		servers []string
		opts    zklock.Options
	}{
		{"no servers", nil, zklock.Options{}},
		{"no port", []string{"127.0.0.1"}, zklock.Options{}},
		{"relative root", []string{"127.0.0.1:1"}, zklock.Options{Root: "locks"}},
		{"negative timeout", []string{"127.0.0.1:1"}, zklock.Options{SessionTimeout: -time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := zklock.New(ctx, tc.servers, tc.opts); !errors.Is(err, zklock.ErrConfig) {
				t.Errorf("New: %v, want ErrConfig", err)
			}
		})
	}
	t.Run("nobody answers", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if _, err := zklock.New(ctx, []string{"127.0.0.1:1"}, zklock.Options{}); !errors.Is(err, dlock.ErrUnavailable) {
			t.Errorf("New: %v, want ErrUnavailable", err)
		}
	})
}

// TestReady: a Locker is ready while the ensemble answers, and not once
// its link is cut.
func TestReady(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	link := z.Proxies()[0]
	m := newLocker(t, z, []string{link.Addr()}, 0)
	if err := m.Ready(context.Background()); err != nil {
		t.Errorf("Ready: %v", err)
	}
	link.Hold()
	defer link.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := m.Ready(ctx); !errors.Is(err, dlock.ErrUnavailable) {
		t.Errorf("Ready with the link held: %v, want ErrUnavailable", err)
	}
}

// TestTTLChecked: a ttl under a millisecond is refused, as by dlock's
// lockers, though the session is the lease.
func TestTTLChecked(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	m := newLocker(t, z, z.Servers(), 0)
	if _, err := m.Lock(context.Background(), "k", 0, time.Second); err == nil {
		t.Error("Lock with a zero ttl: no error")
	}
}
