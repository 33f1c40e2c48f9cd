package tally

import (
	"context"
	"fmt"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Drain records how a queued strategy's orders (redis-queue) reached the
// database after the attack: its buyers were answered 202 at once, and the
// shops' consumers wrote the orders behind them.
type Drain struct {
	// Took is the time from the last click to the moment the queue had
	// nothing left: no entry unread, none pending (the audit's backlog).
	Took time.Duration
	// Err says why the queue was not seen drained ("" if it was): the wait
	// ran out (drainWait), or the shop did not answer.
	Err string
}

// drainWait bounds the wait for a queue to drain (a variable for the
// tests); drainPoll is how often the audit is read meanwhile.
var drainWait = 60 * time.Second

const drainPoll = 50 * time.Millisecond

// Auditor reads a shop's audit of a product. Implementations must be safe
// for concurrent use.
type Auditor interface {
	Audit(ctx context.Context, product string) (Audit, error)
}

// WaitDrain polls shop's audit of product until its queue has nothing
// left to write, for at most drainWait after the call, and returns how
// long that took from the last click in results. Only ctx's end is an
// error; a queue that did not drain in time is recorded in Drain.Err, and
// the audit after it shows what was written by then. tick, if not nil, is
// called at every poll (the live view's snapshots), from the caller's
// goroutine.
func WaitDrain(ctx context.Context, shop Auditor, product string, results vegeta.Results, tick func()) (*Drain, error) {
	last := lastClick(results)
	deadline := time.Now().Add(drainWait)
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	for {
		au, err := shop.Audit(ctx, product)
		now := time.Now()
		switch {
		case err == nil && drained(au):
			return &Drain{Took: now.Sub(last)}, nil
		case now.After(deadline) && err != nil:
			return &Drain{Took: now.Sub(last), Err: err.Error()}, nil
		case now.After(deadline):
			return &Drain{Took: now.Sub(last), Err: fmt.Sprintf("not drained within %v: %d queued, %d pending%s",
				drainWait, deref(au.QueueLength), deref(au.QueuePending), redisNote(au.RedisError))}, nil
		}
		if tick != nil {
			tick()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// lastClick is when the last request of results was sent (now, if none).
func lastClick(results vegeta.Results) time.Time {
	var last time.Time
	for _, r := range results {
		if r.Timestamp.After(last) {
			last = r.Timestamp
		}
	}
	if last.IsZero() {
		return time.Now()
	}
	return last
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func redisNote(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}
