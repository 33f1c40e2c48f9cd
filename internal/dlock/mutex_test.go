package dlock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// 100 goroutines over four processes take one key and do read-sleep-write
// inside: lua and redlock never let two in at once.
func TestMutualExclusion(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range safeModes {
			t.Run(string(mode), func(t *testing.T) {
				c := contention{goroutines: 100, processes: 3, ttl: 500 * time.Millisecond,
					wait: 20 * time.Second, work: time.Millisecond}
				got := c.run(t, r, mode)
				for _, err := range got.errs {
					t.Errorf("lock or release: %v", err)
				}
				if got.overlaps != 0 {
					t.Errorf("overlaps = %d, want 0", got.overlaps)
				}
				if got.acquired != 100 || got.counter != 100 {
					t.Errorf("acquired = %d, counter = %d, want 100 and 100", got.acquired, got.counter)
				}
			})
		}
	})
}

// With a TTL shorter than the critical section, naive lets a second holder
// in while the first still works: the overlap the lesson is about.
func TestMutualExclusionNaiveFails(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		c := contention{goroutines: 100, processes: 4, ttl: 50 * time.Millisecond,
			wait: 10 * time.Second, work: 150 * time.Millisecond, stopOnOverlap: true}
		got := c.run(t, r, dlock.ModeNaive)
		if got.overlaps == 0 {
			t.Errorf("overlaps = 0 with TTL 50ms < work 150ms, want some (acquired %d)", got.acquired)
		}
		for _, err := range got.errs {
			// Expected: waiters cancelled after the overlap, releases of
			// locks that had expired. Anything else is a bug.
			if !errors.Is(err, dlock.ErrTimeout) && !errors.Is(err, dlock.ErrNotHeld) {
				t.Errorf("unexpected error: %v", err)
			}
		}
	})
}
