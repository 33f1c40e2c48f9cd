package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/stock"
)

// One round trip, many buyers: the accepts a shop queues while a trip is
// out go together in the next, one pipeline of their SETs and scripts.
// Each script still runs on its own, atomically, in arrival order; only the
// trip is shared. Nobody waits for a pipeline to fill (no timer), and one
// goroutine per Queue sends while anybody is queued.
//
// Each order's SET (its product, for Status) goes before its script, so an
// accepted order can always be looked up; it cannot go inside the script,
// as the order's key has its own Cluster slot. If the SET failed and the
// script ran, the buyer is told in doubt, not 202 (flush), and a retry
// finds the order as a duplicate. The SET is NX, and the next trip deletes
// a refused accept's key only if this send created it: an older key is an
// earlier send's of the same order, which may have been accepted.

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
	res    []any
	err    error
	made   bool  // its SET created the order's key, in this trip
	keyErr error // its SET failed (the last send's), and may not have run
	done   chan struct{}
}

// acceptQueue is the accepts waiting for the next round trip. The zero
// value is ready.
type acceptQueue struct {
	mu      sync.Mutex
	waiting []*acceptCall
	refused []string // the order keys of refused accepts, for the next trip to delete
	sending bool     // a goroutine is sending them
}

// acceptShared runs o's script in the next shared round trip and returns
// the script's reply. If ctx ends first, it returns ctx's error at once:
// o is withdrawn, unsent, if its trip has not left; otherwise the script
// may have run (the trip goes on without it). If sendBy (not zero) passes
// before o's trip leaves, o is withdrawn and stock.ErrBusy returned.
func (q *Queue) acceptShared(ctx context.Context, o Order, sendBy time.Time) ([]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var waited <-chan time.Time
	if !sendBy.IsZero() {
		wait := time.Until(sendBy)
		if wait <= 0 {
			return nil, stock.ErrBusy
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		waited = t.C
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
		a.withdraw(c)
		return nil, ctx.Err()
	case <-waited:
		if a.withdraw(c) {
			return nil, stock.ErrBusy
		}
	}
	// Its trip has left: it is answered as any sent accept.
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// withdraw takes c out of the queue if its trip has not left, and reports
// whether it did.
func (a *acceptQueue) withdraw(c *acceptCall) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, w := range a.waiting {
		if w == c {
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			return true
		}
	}
	return false
}

// send sends the queued accepts, a trip at a time, until none is queued
// and no refused accept's key is left to delete. An accept whose caller
// gave up before its trip left is not sent.
func (q *Queue) send() {
	for {
		calls, refused := q.accepts.next()
		if calls == nil && refused == nil {
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
		refused = q.flush(live, refused)
		q.bells.ring(acceptedProducts(live))
		for _, c := range calls {
			close(c.done)
		}
		q.accepts.mu.Lock()
		q.accepts.refused = append(q.accepts.refused, refused...)
		q.accepts.mu.Unlock()
	}
}

// acceptedProducts is the product of each call its script accepted.
func acceptedProducts(calls []*acceptCall) []string {
	var products []string
	for _, c := range calls {
		if code, _ := firstInt(c.res); code == 1 { // its key's SET may have failed: queued all the same
			products = append(products, c.order.ProductID)
		}
	}
	return products
}

// next takes the next trip: the first tripMax accepts queued, and the
// keys of the accepts refused so far. When there is neither, it ends the
// sending and returns nils.
func (a *acceptQueue) next() ([]*acceptCall, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := min(len(a.waiting), tripMax)
	if n == 0 && len(a.refused) == 0 {
		a.sending, a.waiting = false, nil
		return nil, nil
	}
	calls := append([]*acceptCall(nil), a.waiting[:n]...)
	a.waiting = a.waiting[n:]
	refused := a.refused
	a.refused = nil
	return calls, refused
}

// flush runs calls in one pipeline, which also deletes the order keys in
// stale (best effort: each expires anyway), fills in each call's reply,
// and returns the order keys of the calls refused whose SET created them.
func (q *Queue) flush(calls []*acceptCall, stale []string) (refused []string) {
	ctx, cancel := context.WithTimeout(context.Background(), flushBound)
	defer cancel()
	cmds := q.runAccepts(ctx, calls, stale, false)
	q.againIfFlushed(ctx, calls, cmds)
	for i, c := range calls {
		c.res, c.err = cmds[i].Slice()
		code, _ := firstInt(c.res)
		switch {
		case c.err == nil && code < 0 && c.made:
			refused = append(refused, orderKey(c.order.ID))
		case c.err == nil && code == 1 && c.keyErr != nil:
			// Queued, but Status may not find it: not a 202.
			c.err = fmt.Errorf("accepted, but the order's key was not written: %w", c.keyErr)
		}
	}
	return refused
}

// firstInt is reply's first element, if it is an integer.
func firstInt(reply []any) (int64, bool) {
	if len(reply) == 0 {
		return 0, false
	}
	n, ok := reply[0].(int64)
	return n, ok
}

// runAccepts sends, in one pipeline, the DEL of the keys in stale and,
// for each call in order, its SET NX and its script: by hash, or with the
// script's text (EVAL, which also loads it for the next trips). It
// returns the scripts' commands, and marks the calls whose SET created
// their key.
func (q *Queue) runAccepts(ctx context.Context, calls []*acceptCall, stale []string, byText bool) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(calls))
	sets := make([]*redis.BoolCmd, len(calls))
	_, _ = q.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range stale { // one DEL each: every order key has its own hash tag
			p.Del(ctx, k)
		}
		for i, c := range calls {
			o := c.order
			sets[i] = p.SetNX(ctx, orderKey(o.ID), o.ProductID, orderTTL)
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
	for i, c := range calls {
		c.made = c.made || sets[i].Val() // a NOSCRIPT rerun finds the key its first SET made
		c.keyErr = sets[i].Err()
		if errors.Is(c.keyErr, redis.Nil) {
			c.keyErr = nil
		}
	}
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
	for j, cmd := range q.runAccepts(ctx, again, nil, true) {
		cmds[at[j]] = cmd
	}
}
