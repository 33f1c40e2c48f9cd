package scenario

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/flashsale/flashsale/internal/harness/tally"
)

// Snapshot is one attack's figures so far, as a live view shows them
// (Options.Watch): the answers counted, the latency percentiles, and the
// shop's latest audit of the product. The last Snapshot of an attack has
// Done set.
type Snapshot struct {
	Strategy Strategy
	Planned  int
	Sent     int
	Elapsed  time.Duration
	// Created, SoldOut, DupRejected and Unavailable (503s) count answers;
	// Failed counts requests that got no answer.
	Created, SoldOut, DupRejected, Unavailable, Failed int
	// Queued counts 202s (redis-queue).
	Queued int
	// Shed counts the clicks turned away for load, by code (Tally.Shed).
	Shed map[string]int
	// OrdersPerSec is 201s and 202s per second of attack so far.
	OrdersPerSec  float64
	P50, P90, P99 time.Duration
	// Audit is the shop's latest audit, nil before the first answered.
	Audit *tally.Audit
	// Events are the fleet's latest counts for the product (paid,
	// expired, returned...), read only in a sale with payments
	// (Settings.Paying); nil otherwise, or before the first read.
	Events *tally.Events
	// Done marks the attack's last snapshot.
	Done bool
}

// watchEvery is how often a watched attack sends a Snapshot and asks the
// shop for an audit.
const watchEvery = 250 * time.Millisecond

// watcher sends an attack's snapshots to Options.Watch, and keeps the
// shop's latest audit of the product, read in the background. A nil
// *watcher does nothing: nobody is watching.
type watcher struct {
	a     *attack
	start time.Time
	last  time.Time
	audit atomic.Pointer[tally.Audit]
	// events are the fleet's counts for the product (a sale with
	// payments only: the audit has no count of units returned).
	events atomic.Pointer[tally.Events]
	stop   context.CancelFunc
	done   chan struct{}
}

// watch starts watching a, if anyone is.
func (a *attack) watch(ctx context.Context) *watcher {
	if a.opts.Watch == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &watcher{a: a, start: time.Now(), stop: cancel, done: make(chan struct{})}
	go w.poll(ctx)
	return w
}

// poll reads the shop's audit of the product, and in a sale with
// payments the fleet's events, until ctx ends; a failed read keeps the
// last one.
func (w *watcher) poll(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		actx, cancel := context.WithTimeout(ctx, watchEvery*4)
		a, err := w.a.api.Audit(actx, w.a.productID)
		if err == nil {
			w.audit.Store(&a)
		}
		cancel()
		if w.a.settings.Paying() { // a slow audit leaves the events their own time
			ectx, cancel := context.WithTimeout(ctx, watchEvery*4)
			if e, err := w.a.events(ectx, w.a.productID); err == nil {
				w.events.Store(&e)
			}
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// update sends a snapshot of res if one is due.
func (w *watcher) update(sent int, res *StrategyResult) {
	if w == nil || time.Since(w.last) < watchEvery {
		return
	}
	w.last = time.Now()
	w.a.opts.Watch(w.snapshot(sent, res, time.Since(w.start)))
}

// finish stops the polling and sends the attack's last snapshot, from its
// result: the final audit, and Vegeta's closed metrics.
func (w *watcher) finish(res *StrategyResult) {
	if w == nil {
		return
	}
	w.stop()
	<-w.done
	s := w.snapshot(res.Sent, res, res.Elapsed())
	if res.Audit.ProductID != "" {
		audit := res.Audit
		s.Audit = &audit
		if w.a.settings.Paying() {
			events := res.Events
			s.Events = &events
		}
	}
	s.OrdersPerSec, s.Done = res.OrdersPerSec(), true
	w.a.opts.Watch(s)
}

func (w *watcher) snapshot(sent int, res *StrategyResult, elapsed time.Duration) Snapshot {
	t := &res.Tally
	s := Snapshot{
		Strategy: w.a.strategy, Planned: res.Planned, Sent: sent, Elapsed: elapsed,
		Created: t.Created, Queued: t.Queued, SoldOut: t.SoldOut, DupRejected: t.DupRejected(),
		Unavailable: t.Status[503], Failed: t.Status[0], Shed: t.Shed(),
		P50: res.Metrics.Latencies.Quantile(0.5), P90: res.Metrics.Latencies.Quantile(0.9),
		P99:   res.Metrics.Latencies.Quantile(0.99),
		Audit: w.audit.Load(), Events: w.events.Load(),
	}
	if sec := elapsed.Seconds(); sec > 0 {
		s.OrdersPerSec = float64(t.Accepted()) / sec
	}
	return s
}
