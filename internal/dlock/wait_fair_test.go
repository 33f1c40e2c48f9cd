package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// contend has each of lockers (one per process) take key with perProcess
// goroutines, each taking it, working a millisecond, releasing and asking
// again at once, until it is stopped. The TTL (5 s) and the wait (a
// minute) are long: a loaded machine (embedded nodes, under -race) can take
// a Redlock node past 100 ms to answer, and the test is about who gets the
// key, not how fast. From the moment count is called on
// it, it counts the grants of each process, and returns them once n have
// been counted (failing t if that takes more than a minute). A release
// that finds the lock gone is counted in lost; any other error fails t.
type contend struct {
	t       *testing.T
	lockers []dlock.Locker
	key     string

	counting atomic.Bool
	lost     atomic.Int64 // releases that found the lock gone
	counts   []atomic.Int64
	total    atomic.Int64
	stop     chan struct{}
	wg       sync.WaitGroup
}

func startContending(t *testing.T, lockers []dlock.Locker, key string, perProcess int) *contend {
	c := &contend{t: t, lockers: lockers, key: key, counts: make([]atomic.Int64, len(lockers)), stop: make(chan struct{})}
	ctx := context.Background()
	for p, l := range lockers {
		for range perProcess {
			c.wg.Go(func() {
				for {
					select {
					case <-c.stop:
						return
					default:
					}
					lk, err := l.Lock(ctx, key, 5*time.Second, time.Minute)
					if err != nil {
						t.Errorf("process %d: Lock: %v", p, err)
						return
					}
					if c.counting.Load() {
						c.counts[p].Add(1)
						c.total.Add(1)
					}
					time.Sleep(time.Millisecond) // the work
					if err := lk.Release(ctx); errors.Is(err, dlock.ErrNotHeld) {
						c.lost.Add(1)
					} else if err != nil {
						t.Errorf("process %d: Release: %v", p, err)
						return
					}
				}
			})
		}
	}
	t.Cleanup(c.end)
	return c
}

// count counts the next n grants and returns them per process.
func (c *contend) count(n int64) []int64 {
	c.t.Helper()
	c.counting.Store(true)
	testenv.WaitFor(c.t, time.Minute, fmt.Sprintf("%d grants", n), func() bool { return c.total.Load() >= n || c.t.Failed() })
	c.end()
	got := make([]int64, len(c.counts))
	for p := range c.counts {
		got[p] = c.counts[p].Load()
	}
	return got
}

// end stops the goroutines and waits for them, once.
func (c *contend) end() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.wg.Wait()
}

// atLeast fails t for every process whose grants are under frac of its
// fair share of all of them.
func atLeast(t *testing.T, got []int64, frac float64, what string) {
	t.Helper()
	var all int64
	for _, n := range got {
		all += n
	}
	t.Logf("grants per process%s: %v", what, got)
	for p, n := range got {
		if float64(n)*float64(len(got)) < frac*float64(all) {
			t.Errorf("process %d got %d of %d grants%s, under %.2f of its fair share", p, n, all, what, frac)
		}
	}
}

// fairGrants is how many grants the fairness tests count: enough for 60
// runs of fairTurns (8) grants, so that a process with a fair chance of
// winning the race at the end of each run gets under a quarter of its
// share with odds under 1e-4, whatever the machine's speed.
const fairGrants = 480

// Three processes contending for one key each get a fair part of the
// grants, whether each has one goroutine asking (the releaser asks again
// at once) or several: none starves. On a quiet machine each gets about
// its share (the benchmarks' min-share, see README.md); this test also
// runs on busy CI machines, where a process whose goroutines are not
// scheduled in time loses races it would win alone, so it asks for a
// quarter of the fair share. A lock without the fairness rule fails that:
// redislock's min-share is about 0.2 with one goroutine per process.
func TestFairness(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		for _, mode := range []dlock.Mode{dlock.ModeLua, dlock.ModeRedlock} {
			for _, perProcess := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%d-per-process", mode, perProcess), func(t *testing.T) {
					if perProcess == 1 {
						testenv.SkipShort(t, "one locker per process; the 3-per-process row checks the same bound")
					}
					key := r.Key(fmt.Sprintf("fair-%s-%d", mode, perProcess))
					lockers := []dlock.Locker{newLocker(t, r, mode), newLocker(t, r, mode), newLocker(t, r, mode)}
					c := startContending(t, lockers, key, perProcess)
					// Counted once every process listens to the key's
					// releases: before that, a process that has never been
					// refused does not know the key is contended.
					for _, l := range lockers {
						waitHears(t, l, key)
					}
					atLeast(t, c.count(fairGrants), 0.25, "")
					if n := c.lost.Load(); n > 0 {
						t.Errorf("%d releases found the lock gone", n)
					}
				})
			}
		}
	})
}

// Three redlock processes stay fair after one node goes down while they
// contend: each gets at least half its fair share, counted over enough
// grants (150 runs) for a fair race to give a process under half its share
// with odds under 1e-4. The node's gap clears its confirmation of every
// key's subscription in every process; the four nodes left are still a
// quorum, so each process still awaits its run-ending release and races
// the others on equal terms (had the gap made it stop awaiting, the
// releaser's next head would race heads that have not heard the release).
func TestRedlockFairnessAfterNodeDown(t *testing.T) {
	testenv.SkipShort(t, "fairness with a node down; TestFairness checks the bound with every node up")
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		key := r.Key("fair-down")
		var lockers []dlock.Locker
		for range 3 {
			lockers = append(lockers, newLocker(t, r, dlock.ModeRedlock))
		}
		c := startContending(t, lockers, key, 1)
		confirmedBy := func(n int) func() bool {
			return func() bool {
				for _, l := range lockers {
					if dlock.Confirmed(l, key) != n {
						return false
					}
				}
				return true
			}
		}
		testenv.WaitFor(t, 20*time.Second, "every process listening, confirmed by 5 nodes", confirmedBy(5))
		r.Stop(4)
		defer r.Start(4)
		testenv.WaitFor(t, 20*time.Second, "every process's gap on node 4 seen", confirmedBy(4))
		atLeast(t, c.count(3*50*8), 0.5, " with node 4 down")
		// A lock granted by three nodes, node 4 among them, is lost with
		// it: its release finds it on two (Redlock's rule, not unfairness).
		t.Logf("%d releases found the lock gone", c.lost.Load())
	})
}
