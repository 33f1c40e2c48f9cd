package queue

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// One round trip, many buyers. Each accept is one script and then one SET
// (the order's product, for Status): two round trips, each a write and a
// read on a socket at both ends, which is most of what an accept costs.
// So the buyers of a shop that arrive together share them: the accepts
// queued while a round trip is out go in the next one, one pipeline of
// their scripts, then one pipeline of their SETs. Each script still runs
// on its own, atomically, in arrival order; only the trips are shared.
//
// As with the batched strategies' batches: nobody waits for a pipeline to
// fill (it is whoever is queued when the last one came back, no timer),
// and one goroutine per Queue sends them while anybody is queued.

// tripMax bounds the accepts in one trip: a pipeline must be written and
// read within the client's timeouts whatever its size, so a burst goes in
// trips of at most this many.
const tripMax = 64

// flushBound bounds one pipeline: the buyers in it may have deadlines of
// their own, and none of them owns the trip. The Redis client's read and
// write timeouts usually end a hung trip first.
const flushBound = 2 * time.Second

// acceptCall is one Accept in a shared round trip.
type acceptCall struct {
	ctx   context.Context // the caller's: not sent once it has ended
	order Order
	// Set by the flush, before done is closed.
	res  []any
	err  error
	done chan struct{}
}

// acceptQueue is the accepts waiting for the next round trip. The zero
// value is ready.
type acceptQueue struct {
	mu      sync.Mutex
	waiting []*acceptCall
	sending bool // a goroutine is sending them
}

// acceptShared runs o's script in the next shared round trip and returns
// the script's reply. If ctx ends first, it returns ctx's error at once:
// o is withdrawn, unsent, if its trip has not left; otherwise the script
// may have run (the trip goes on without it).
func (q *Queue) acceptShared(ctx context.Context, o Order) ([]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &acceptCall{ctx: ctx, order: o, done: make(chan struct{})}
	a := &q.accepts
	a.mu.Lock()
	a.waiting = append(a.waiting, c)
	if !a.sending {
		a.sending = true
		go q.send()
	}
	a.mu.Unlock()
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
	}
	a.withdraw(c)
	return nil, ctx.Err()
}

// withdraw takes c out of the queue if its trip has not left.
func (a *acceptQueue) withdraw(c *acceptCall) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, w := range a.waiting {
		if w == c {
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			return
		}
	}
}

// send sends the queued accepts, a trip at a time, until none is queued.
// An accept whose caller gave up before its trip left is not sent.
func (q *Queue) send() {
	for {
		calls := q.accepts.next()
		if calls == nil {
			return
		}
		live := make([]*acceptCall, 0, len(calls))
		for _, c := range calls {
			if err := c.ctx.Err(); err != nil {
				c.err = err // its reply, if the caller reads one: unsent
				continue
			}
			live = append(live, c)
		}
		if len(live) > 0 {
			q.flush(live)
		}
		for _, c := range calls {
			close(c.done)
		}
	}
}

// next takes the next trip's accepts, the first tripMax queued, or, when
// none is, ends the sending and returns nil.
func (a *acceptQueue) next() []*acceptCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := min(len(a.waiting), tripMax)
	if n == 0 {
		a.sending, a.waiting = false, nil
		return nil
	}
	calls := append([]*acceptCall(nil), a.waiting[:n]...)
	a.waiting = a.waiting[n:]
	return calls
}

// flush runs calls' scripts in one pipeline, then SETs the product of each
// order accepted in another, and fills in each call's reply.
func (q *Queue) flush(calls []*acceptCall) {
	ctx, cancel := context.WithTimeout(context.Background(), flushBound)
	defer cancel()
	cmds := q.runAccepts(ctx, calls, false)
	q.againIfFlushed(ctx, calls, cmds)
	var accepted []*acceptCall
	for i, c := range calls {
		c.res, c.err = cmds[i].Slice()
		if c.err == nil && len(c.res) > 0 && c.res[0] == int64(1) {
			accepted = append(accepted, c)
		}
	}
	if len(accepted) == 0 {
		return
	}
	// The product of each order, for whoever polls it. Best effort: the
	// orders are queued whether or not this lands.
	_, _ = q.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range accepted {
			p.Set(ctx, orderKey(c.order.ID), c.order.ProductID, orderTTL)
		}
		return nil
	})
}

// runAccepts sends calls' scripts in one pipeline, in order: by hash, or
// with the script's text (EVAL, which also loads it for the next trips).
func (q *Queue) runAccepts(ctx context.Context, calls []*acceptCall, byText bool) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = q.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range calls {
			o := c.order
			created := strconv.FormatInt(o.CreatedAt.UnixMicro(), 10)
			keys := []string{stockKeyOf(o.ProductID), buyersKey(o.ProductID), streamKey(o.ProductID), statusKey(o.ProductID)}
			run := acceptScript.EvalSha
			if byText {
				run = acceptScript.Eval
			}
			cmds[i] = run(ctx, p, keys, o.UserID, o.Quantity, o.ID, created, o.ProductID)
		}
		return nil
	})
	return cmds
}

// againIfFlushed runs again, with the script's text, the scripts Redis
// answered NOSCRIPT (it restarted, or its scripts were flushed): a script
// refused so ran nowhere. It replaces their commands in cmds.
func (q *Queue) againIfFlushed(ctx context.Context, calls []*acceptCall, cmds []*redis.Cmd) {
	var again []*acceptCall
	var at []int
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			again, at = append(again, calls[i]), append(at, i)
		}
	}
	if len(again) == 0 {
		return
	}
	for j, cmd := range q.runAccepts(ctx, again, true) {
		cmds[at[j]] = cmd
	}
}
