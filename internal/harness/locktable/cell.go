package locktable

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// releaseWithin bounds one release: a release is sent even after the
// run's context ended (a lock left held would be in the way of the next
// cell), but not waited for forever.
const releaseWithin = 5 * time.Second

// sample is what one cell measured: one system, one case, one round.
type sample struct {
	ops      int             // cycles that ended inside the window
	window   time.Duration   // how long the window was
	lat      []time.Duration // every cycle that started inside it, the last ones too
	errs     int             // acquires and releases that failed
	firstErr error
	cpu      cpuUse
}

// window is when a cell counts, as UnixNano, shared by its workers:
// nothing counts until from is set, and nothing starts from end on.
type window struct {
	from, end atomic.Int64
}

func (w *window) open(from, end time.Time) {
	w.end.Store(end.UnixNano())
	w.from.Store(from.UnixNano())
}

// counts reports whether t is inside the window.
func (w *window) counts(t time.Time) bool {
	from := w.from.Load()
	return from != 0 && t.UnixNano() >= from && t.UnixNano() < w.end.Load()
}

// over reports whether the window has closed by t.
func (w *window) over(t time.Time) bool {
	return w.from.Load() != 0 && t.UnixNano() >= w.end.Load()
}

// closeAt closes the window at t, if it is open and t is earlier.
func (w *window) closeAt(t time.Time) {
	for {
		end := w.end.Load()
		if t.UnixNano() >= end || w.end.CompareAndSwap(end, t.UnixNano()) {
			return
		}
	}
}

// measure runs c on acq: the workers loop on acquire and release through
// the warm-up, which does not count, then through the window. The warm-up
// lasts o.Warmup and until every worker has ended its first cycle: a
// first acquisition may pay for setting up (a connection dialled, a
// ZooKeeper key's directory created), and under a hot key the last worker
// gets its first turn only after every other one.
//
// A cycle counts towards the rate if it ends inside the window (the steady
// state: under a hot key the cycles that end first began waiting in the
// warm-up), and towards the latency if it starts inside it; the cycles in
// flight when the window closes are waited for and their latency kept, so
// that the last waiters of a hot key are not left out of its p99. The
// window closes early, at the moment it would start a cycle past o.MaxOps.
func measure(ctx context.Context, acq Acquire, c Case, o Options) sample {
	warmUntil := time.Now().Add(o.Warmup)
	var (
		win     window
		started atomic.Int64 // cycles started inside the window
		warm    = make(chan struct{}, c.Workers)
		wg      sync.WaitGroup
	)
	win.end.Store(math.MaxInt64)
	workers := make([]sample, c.Workers)
	for w := range workers {
		key := 0 // the hot key
		if !c.Hot {
			key = w + 1
		}
		wg.Go(func() { workers[w] = loop(ctx, acq, key, &win, &started, warm, o) })
	}
	var cpu cpuUse
	if sleepUntil(ctx, warmUntil) && awaitAll(ctx, warm, c.Workers) {
		from := time.Now()
		until := from.Add(o.Duration)
		win.open(from, until)
		before := readCPU()
		if sleepUntil(ctx, until) {
			cpu = cpuBetween(before, readCPU(), until.Sub(from))
		}
	}
	wg.Wait()
	s := sample{window: time.Duration(win.end.Load() - win.from.Load()), cpu: cpu}
	for _, w := range workers {
		s.ops += w.ops
		s.lat = append(s.lat, w.lat...)
		s.errs += w.errs
		if s.firstErr == nil {
			s.firstErr = w.firstErr
		}
	}
	return s
}

// loop is one worker of measure, on key. It sends on warm once, when its
// first cycle has ended.
func loop(ctx context.Context, acq Acquire, key int, win *window, started *atomic.Int64,
	warm chan<- struct{}, o Options) sample {
	var s sample
	first := true
	for ctx.Err() == nil {
		t0 := time.Now()
		if win.over(t0) {
			break
		}
		counting := win.counts(t0)
		if counting && started.Add(1) > int64(o.MaxOps) {
			win.closeAt(t0)
			break
		}
		release, err := acq(ctx, key)
		if err == nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseWithin)
			err = release(rctx)
			cancel()
		}
		t1 := time.Now()
		if first {
			warm <- struct{}{}
			first = false
		}
		if err != nil {
			if ctx.Err() != nil {
				break // the run was stopped: not the lock's failure
			}
			s.errs++
			if s.firstErr == nil {
				s.firstErr = err
			}
			sleepUntil(ctx, t1.Add(o.Pause))
			continue
		}
		if counting {
			s.lat = append(s.lat, t1.Sub(t0))
		}
		if win.counts(t1) {
			s.ops++
		}
	}
	return s
}

// awaitAll receives n times from ch, or until ctx ends; it reports
// whether all n came.
func awaitAll(ctx context.Context, ch <-chan struct{}, n int) bool {
	for range n {
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// sleepUntil waits until t, or until ctx ends; it reports whether t came.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
