package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Redlock nodes whose SET ran but whose reply was lost hold a piece of
// the lock nobody counted. A grant (a majority answered) must release it
// there too; a failed acquire (a majority of replies lost) must undo it
// there before TryLock returns, or the next buyer finds the key held.
func TestAttack45RedlockLostGrantRepliesAreCleanedUp(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, lostOn := range [][]int{{4}, {0, 1, 2}} {
			t.Run(fmt.Sprint(lostOn), func(t *testing.T) {
				ctx := context.Background()
				key := r.Key(fmt.Sprintf("lost-%d", len(lostOn)))
				lost := &lostReply{match: isAcquire}
				lost.on.Store(true)
				cs := clients(t, r)
				for _, i := range lostOn {
					cs[i].AddHook(lost)
				}
				a := dlock.NewRedlock(cs)
				defer func() { _ = a.Close() }()
				l, err := a.TryLock(ctx, key, 10*time.Second)
				granted := len(lostOn) < 3
				switch {
				case granted && err != nil:
					t.Fatalf("TryLock with %v's replies lost = %v, want a grant", lostOn, err)
				case !granted && err == nil:
					t.Fatalf("TryLock with %v's replies lost = a grant, want an error", lostOn)
				case granted:
					if err := l.Release(ctx); err != nil {
						t.Fatalf("Release: %v", err)
					}
				case !errors.Is(err, dlock.ErrUnavailable):
					t.Errorf("TryLock with %v's replies lost = %v, want ErrUnavailable", lostOn, err)
				}
				for i := range r.Len() {
					if keys := r.Keys(i, key); len(keys) != 0 {
						t.Errorf("node %d still has %v after TryLock (granted %v) and Release returned", i, keys, granted)
					}
				}
				if _, err := newLocker(t, r, dlock.ModeRedlock).TryLock(ctx, key, time.Second); err != nil {
					t.Errorf("another TryLock afterwards = %v, want a grant", err)
				}
			})
		}
	})
}
