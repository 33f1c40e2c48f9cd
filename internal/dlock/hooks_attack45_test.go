package dlock_test

// Faults for the attack45 tests: a reply lost after the server ran the
// command (lostReply), and a command held on the wire past its caller's
// context, to land after commands sent later (lateLanding).

import (
	"context"
	"net"
	"os"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// lostReply runs the commands match picks and then drops their reply, as a
// read timeout does when the answer is lost on the way back: the caller's
// context is still live, the server has run the command, and the caller
// gets an i/o timeout.
type lostReply struct {
	match func(redis.Cmder) bool
	on    atomic.Bool
	hits  atomic.Int64
}

// errLostReply is what go-redis returns when a read hits its ReadTimeout.
var errLostReply error = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}

func (h *lostReply) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *lostReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.on.Load() || !h.match(cmd) {
			return next(ctx, cmd)
		}
		if err := next(ctx, cmd); err != nil {
			return err // NOSCRIPT, say: go-redis sends the EVAL next
		}
		h.hits.Add(1) // the server ran it
		cmd.SetErr(errLostReply)
		return errLostReply
	}
}

func (h *lostReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// lateLanding holds the commands match picks until gate is closed, and
// then sends them whatever their caller's context says by then, as a
// request that was already on the wire (a retransmitted packet) lands
// after requests sent later on other connections. sent is closed when the
// first picked command is held.
type lateLanding struct {
	match  func(redis.Cmder) bool
	gate   chan struct{}
	sent   chan struct{}
	landed chan struct{} // closed once the held command has run
	once   atomic.Bool
}

func newLateLanding(match func(redis.Cmder) bool) *lateLanding {
	return &lateLanding{match: match, gate: make(chan struct{}), sent: make(chan struct{}), landed: make(chan struct{})}
}

func (h *lateLanding) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *lateLanding) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.match(cmd) || !h.once.CompareAndSwap(false, true) {
			return next(ctx, cmd)
		}
		close(h.sent)
		<-h.gate
		err := next(context.WithoutCancel(ctx), cmd)
		close(h.landed)
		return err
	}
}

func (h *lateLanding) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
