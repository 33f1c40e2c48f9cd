package bench

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkContended has g goroutines of one process loop on one key:
// acquire (waiting up to benchWait with the implementation's own strategy),
// a tiny critical section (an atomic counter), release. It stops at the
// b.N-th successful acquisition (see contend) and reports acquisitions per
// second of wall time (acq/s); the 99th percentile of the wait for the lock
// (p99-wait-ms), which shows waiters left starving; the process CPU time per
// acquisition (cpu-ns/op); the waits that ran out per acquisition
// (timeouts/op); and the nodes on which the key outlived its last release
// (leftover-keys, which must be 0). Run it with a -benchtime of seconds, so
// that 64 goroutines get many turns each.
func BenchmarkContended(b *testing.B) {
	for _, md := range modes {
		impls := md.impls(nodes)
		for _, im := range impls {
			for _, g := range []int{1, 16, 64} {
				b.Run("mode="+md.name+"/impl="+im.name+"/g="+strconv.Itoa(g), func(b *testing.B) {
					contend(b, []impl{im}, g)
				})
			}
		}
		for _, im := range impls {
			im.close()
		}
	}
}

// contend runs g goroutines over the given processes (goroutine i uses
// procs[i%len(procs)]) until b.N acquisitions have succeeded. Then it stops
// the clock; the goroutines start no new acquire, and those still waiting
// finish their wait (and release) off the clock. Counting only up to the
// b.N-th success keeps the result a throughput, not the time the last of g
// waiters needs to get its one turn: with a backoff of hundreds of
// milliseconds and a small b.N, that tail would be most of the run. Those
// last waits do count in the wait percentile.
//
// It reports acq/s, p99-wait-ms (the 99th percentile of the time from
// calling acquire to holding the lock), cpu-ns/op, timeouts/op and
// leftover-keys; with more than one process, also min-share: the least any
// process got, as a fraction of its fair share (1 is fair).
func contend(b *testing.B, procs []impl, g int) {
	var (
		n        = int64(b.N)
		perProc  = make([]atomic.Int64, len(procs)) // successes that count, per process
		key      = newKey("c")
		done     atomic.Int64 // successful acquisitions, also those after the b.N-th
		timeouts atomic.Int64
		inside   atomic.Int32 // 1 while someone is in the critical section
		overlaps atomic.Int64 // times two were inside at once: must stay 0
		counter  atomic.Int64 // the critical section's work
		wg       sync.WaitGroup
		errc     = make(chan error, g)
		waits    = make([][]time.Duration, g) // per goroutine, so no lock is needed
		stop     atomic.Bool                  // set at the b.N-th success: start no new acquire
		finished = make(chan struct{})        // closed after the b.N-th release
		exited   = make(chan struct{})        // closed when every goroutine returned
		ctx      = context.Background()
	)
	b.ResetTimer()
	cpu, start := cpuTime(), time.Now()
	for i := range g {
		p := i % len(procs)
		wg.Go(func() {
			for !stop.Load() {
				t0 := time.Now()
				release, err := acquire(ctx, procs[p], key, &timeouts)
				waits[i] = append(waits[i], time.Since(t0))
				if err != nil {
					errc <- err
					return
				}
				if !inside.CompareAndSwap(0, 1) {
					overlaps.Add(1)
				}
				counter.Add(1)
				inside.Store(0)
				nth := done.Add(1)
				if nth <= n {
					perProc[p].Add(1)
				}
				if nth == n {
					stop.Store(true)
				}
				if err := release(ctx); err != nil {
					errc <- err
					return
				}
				if nth == n {
					close(finished)
				}
			}
		})
	}
	go func() { wg.Wait(); close(exited) }()
	select {
	case <-finished:
	case <-exited: // every goroutine failed before b.N successes
	}
	elapsed := time.Since(start)
	reportCPU(b, cpu)
	b.StopTimer()
	<-exited
	close(errc)
	for err := range errc {
		b.Error(err)
	}
	if got := overlaps.Load(); got > 0 {
		b.Errorf("%d overlaps: two holders inside the critical section at once", got)
	}
	if got, want := counter.Load(), done.Load(); got != want {
		b.Errorf("counter = %d, want %d (one per acquisition)", got, want)
	}
	if b.Failed() {
		return
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "acq/s")
	b.ReportMetric(float64(percentile(waits, 0.99))/float64(time.Millisecond), "p99-wait-ms")
	b.ReportMetric(float64(leftovers(ctx, b, key)), "leftover-keys")
	b.ReportMetric(float64(timeouts.Load())/float64(n), "timeouts/op")
	if len(procs) > 1 {
		least := perProc[0].Load()
		for i := range perProc {
			least = min(least, perProc[i].Load())
		}
		fair := float64(n) / float64(len(procs))
		b.ReportMetric(float64(least)/fair, "min-share")
		if testing.Verbose() {
			shares := make([]float64, len(procs))
			for i := range perProc {
				shares[i] = float64(perProc[i].Load()) / fair
			}
			b.Logf("N=%d, share of each process / fair share: %.2f", n, shares)
		}
	}
}

// percentile returns the q-th quantile of all the durations in ds.
func percentile(ds [][]time.Duration, q float64) time.Duration {
	var all []time.Duration
	for _, d := range ds {
		all = append(all, d...)
	}
	if len(all) == 0 {
		return 0
	}
	slices.Sort(all)
	return all[min(len(all)-1, int(q*float64(len(all))))]
}

// leftovers counts the Redis nodes on which key still exists once every
// holder has released it, and the etcd queue keys left under it: a lock
// that leaves a key behind blocks that node (or the etcd queue) for the
// key's TTL. It waits a moment first, so that a command still in flight
// lands and is counted.
func leftovers(ctx context.Context, tb testing.TB, key string) int {
	time.Sleep(50 * time.Millisecond)
	n := 0
	for i, c := range nodes {
		got, err := c.Exists(ctx, key).Result()
		if err != nil {
			tb.Errorf("node %d: EXISTS %s: %v", i, key, err)
		}
		n += int(got)
	}
	got, err := etcdLeftovers(ctx, key)
	if err != nil {
		tb.Errorf("etcd: keys under %s: %v", key, err)
	}
	return n + got
}

// acquire waits for key until it gets it, counting the waits that ran out;
// it gives up on any other error and after a few timeouts in a row.
func acquire(ctx context.Context, im impl, key string, timeouts *atomic.Int64) (func(context.Context) error, error) {
	const maxTimeoutsInARow = 3
	for i := 0; ; i++ {
		release, err := im.lock(ctx, key, benchTTL, benchWait)
		switch {
		case err == nil:
			return release, nil
		case !errors.Is(err, errWaitedOut), i+1 >= maxTimeoutsInARow:
			return nil, err
		}
		timeouts.Add(1)
	}
}
