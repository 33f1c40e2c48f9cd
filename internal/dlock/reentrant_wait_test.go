package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Another owner still has to wait: TryLock fails, and Lock gets the key
// once the owner's last hold is released, woken by the release's
// announcement, which only the last release makes.
func TestReentrantForeignOwnerWaits(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, where := range []string{"same locker", "other locker"} {
			t.Run(where, func(t *testing.T) {
				ctx := context.Background()
				key := r.Key("foreign-" + where[:4])
				ttl := 5 * time.Second // far longer than a wake-up by announcement
				m := newReentrant(t, r)
				other := m
				if where == "other locker" {
					other = newReentrant(t, r)
				}
				alice, bob := m.As("alice"), other.As("bob")

				// The test listens to the key's channel too.
				ps := r.Clients()[0].Subscribe(ctx, "dlock:released:"+key)
				defer ps.Close()
				if _, err := ps.Receive(ctx); err != nil {
					t.Fatalf("SUBSCRIBE: %v", err)
				}

				outer, err := alice.TryLock(ctx, key, ttl)
				if err != nil {
					t.Fatalf("alice: TryLock: %v", err)
				}
				inner, err := alice.TryLock(ctx, key, ttl)
				if err != nil {
					t.Fatalf("alice: nested TryLock: %v", err)
				}
				if _, err := bob.TryLock(ctx, key, ttl); !errors.Is(err, dlock.ErrNotObtained) {
					t.Errorf("bob: TryLock = %v, want ErrNotObtained", err)
				}

				type result struct {
					l   *dlock.Lock
					err error
					at  time.Time
				}
				got := make(chan result, 1)
				go func() {
					l, err := bob.Lock(ctx, key, ttl, 3*ttl)
					got <- result{l, err, time.Now()}
				}()
				waitHears(t, other, key)

				if err := outer.Release(ctx); err != nil {
					t.Fatalf("alice: outer Release = %v", err)
				}
				select {
				case res := <-got:
					t.Fatalf("bob: Lock returned (%v) while alice still held the key", res.err)
				case msg := <-ps.Channel():
					t.Errorf("release announced (%q) while alice still held the key", msg.Payload)
				case <-time.After(300 * time.Millisecond):
				}

				released := time.Now()
				if err := inner.Release(ctx); err != nil {
					t.Fatalf("alice: inner Release = %v", err)
				}
				select {
				case msg := <-ps.Channel():
					if msg.Payload != "alice" {
						t.Errorf("announcement = %q, want the owner %q", msg.Payload, "alice")
					}
				case <-time.After(2 * time.Second):
					t.Error("last release not announced within 2s")
				}
				res := <-got
				if res.err != nil {
					t.Fatalf("bob: Lock = %v, want the key after alice's last release", res.err)
				}
				// Without the announcement bob would sleep until the key
				// would expire (at most a second, maxSleep); with it he
				// wakes at once.
				within(t, "bob's Lock after alice's last release", res.at.Sub(released), announcedWake)
				if err := res.l.Release(ctx); err != nil {
					t.Errorf("bob: Release = %v", err)
				}
			})
		}
	})
}

// A nested Lock does not queue behind another owner's waiter in the same
// process: that waiter waits for this very owner's release.
func TestReentrantNestsPastWaiters(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("queued")
		m := newReentrant(t, r)
		alice, bob := m.As("alice"), m.As("bob")

		outer, err := alice.TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("alice: TryLock: %v", err)
		}
		got := make(chan error, 1)
		go func() {
			l, err := bob.Lock(ctx, key, time.Second, 10*time.Second)
			if err == nil {
				err = l.Release(ctx)
			}
			got <- err
		}()
		waitQueued(t, m, key, 1) // bob heads the queue for key

		start := time.Now()
		inner, err := alice.Lock(ctx, key, time.Second, 2*time.Second)
		if err != nil {
			t.Fatalf("alice: nested Lock behind bob's waiter = %v, want it at once", err)
		}
		within(t, "alice's nested Lock", time.Since(start), 500*time.Millisecond)
		for _, l := range []*dlock.Lock{inner, outer} {
			if err := l.Release(ctx); err != nil {
				t.Errorf("alice: Release = %v", err)
			}
		}
		if err := <-got; err != nil {
			t.Errorf("bob: Lock and Release = %v, want the key after alice's holds", err)
		}
	})
}
