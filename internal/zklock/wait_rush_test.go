package zklock_test

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

// TestWaitRunsOutInARush: a holder keeps the key; a rush of waiters
// with the same lock wait queue behind it. Their waits run out together,
// each one's leaving wakes the next, whose wait runs out while it lists
// the queue again. Every one of them must answer dlock.ErrTimeout (the
// ensemble answered all along), none dlock.ErrUnavailable, and none
// much later than its wait.
func TestWaitRunsOutInARush(t *testing.T) {
	for _, stagger := range []bool{false, true} {
		t.Run(map[bool]string{false: "together", true: "staggered"}[stagger], func(t *testing.T) { rush(t, stagger) })
	}
}

func rush(t *testing.T, stagger bool) {
	z := testenv.NewZooKeeper(t)
	lockers := lockerPerMember(t, z)
	ctx := context.Background()
	l, err := lockers[0].Lock(ctx, "rush", time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer release(t, l)
	const waiters, wait = 30, 300 * time.Millisecond
	var mu sync.Mutex
	var timeouts, unavailable, other int
	var done atomic.Int32 // waiters returned, whose nodes are gone
	var late time.Duration
	var wg sync.WaitGroup
	look := z.Conn()
	for i := range waiters {
		if stagger {
			// Start each once the one before has its node (or is done
			// already, on a slow machine): deadlines a round trip or so
			// apart.
			testenv.WaitFor(t, 5*time.Second, "the waiter queued", func() bool {
				return len(queueOf(t, look, z, "rush"))+int(done.Load()) >= i+1
			})
		}
		m := lockers[i%len(lockers)]
		wg.Go(func() {
			start := time.Now()
			g, err := m.Lock(ctx, "rush", time.Second, wait)
			took := time.Since(start)
			defer done.Add(1)
			mu.Lock()
			defer mu.Unlock()
			late = max(late, took-wait)
			switch {
			case err == nil:
				release(t, g)
				t.Errorf("granted while held")
			case errors.Is(err, dlock.ErrTimeout):
				timeouts++
			case errors.Is(err, dlock.ErrUnavailable):
				unavailable++
				if unavailable <= 3 {
					t.Logf("unavailable after %v: %v", took.Round(time.Millisecond), err)
				}
			default:
				other++
				t.Logf("other: %v", err)
			}
		})
	}
	wg.Wait()
	t.Logf("%d waiters, wait %v: %d ErrTimeout, %d ErrUnavailable, %d other; latest return %v past the wait",
		waiters, wait, timeouts, unavailable, other, late.Round(time.Millisecond))
	if unavailable+other > 0 {
		t.Errorf("%d of %d waits that ran out behind a live holder were not ErrTimeout", unavailable+other, waiters)
	}
}
