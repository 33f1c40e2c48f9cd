package dlock_test

// Faults are injected by wrapping the real thing: go-redis hooks that hold
// up (delayHook) or refuse (failSET) chosen commands on chosen nodes'
// clients, run them and drop the reply (lostReply), hold one on the wire
// past its caller (lateLanding), count them (countHits) or act right after
// the first (afterFirst), and matchers that pick a mode's commands out.

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// delayHook is a go-redis hook (add it with AddHook) that holds up the
// commands match picks, by delay: before they are sent, so that the server
// runs them late, or, with before unset, after their reply came, so that the
// server runs them on time and the caller hears late. A pipeline is held up
// whole if match picks any of its commands. If the call's context ends
// during the delay, the call fails with the context's error at once. One
// hook may be added to several clients; delay may be changed at any time.
// With gate set (before the first call), a call held up is held until gate
// is closed as well.
type delayHook struct {
	match  func(redis.Cmder) bool
	before bool
	delay  atomic.Int64 // a time.Duration; 0 lets everything through
	gate   chan struct{}

	hits  atomic.Int64 // calls held up so far
	once  sync.Once
	first chan struct{} // closed at the first hit: once sent (before), once run (after)
}

// newDelayHook returns a hook that holds up what match picks by d, before
// the commands are sent if before is set, else after their reply.
func newDelayHook(match func(redis.Cmder) bool, before bool, d time.Duration) *delayHook {
	h := &delayHook{match: match, before: before, first: make(chan struct{})}
	h.delay.Store(int64(d))
	return h
}

func (h *delayHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *delayHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		return h.around(ctx, []redis.Cmder{cmd}, func() error { return next(ctx, cmd) })
	}
}

func (h *delayHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		return h.around(ctx, cmds, func() error { return next(ctx, cmds) })
	}
}

// around runs call, held up as the hook says if it carries a picked command.
func (h *delayHook) around(ctx context.Context, cmds []redis.Cmder, call func() error) error {
	d := time.Duration(h.delay.Load())
	picked := false
	for _, cmd := range cmds {
		picked = picked || h.match(cmd)
	}
	if d <= 0 || !picked {
		return call()
	}
	hit := func() {
		h.hits.Add(1)
		h.once.Do(func() { close(h.first) })
	}
	if h.before {
		hit()
		if err := h.pause(ctx, d); err != nil {
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
			return err
		}
		return call()
	}
	err := call()
	hit()
	if werr := h.pause(ctx, d); werr != nil {
		for _, cmd := range cmds {
			cmd.SetErr(werr)
		}
		return werr
	}
	return err
}

// pause waits d, and then for the gate if there is one, or returns ctx's
// error if ctx ends first.
func (h *delayHook) pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	if h.gate == nil {
		return nil
	}
	select {
	case <-h.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// failSET makes the acquire (isAcquire) fail while it is on: a Redis that
// refuses this process's acquires (the other commands go through).
type failSET struct{ on atomic.Bool }

func (h *failSET) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failSET) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() && isAcquire(cmd) {
			err := errors.New("injected: SET refused")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *failSET) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// hookedLocker returns a locker of mode on fresh clients, as newLocker does,
// with h added to the clients of the listed nodes (node 0 is lua's).
func hookedLocker(t *testing.T, r *testenv.RedisNodes, mode dlock.Mode, h *delayHook, nodes ...int) dlock.Locker {
	t.Helper()
	cs := clients(t, r)
	for _, i := range nodes {
		cs[i].AddHook(h)
	}
	l, err := dlock.New(mode, cs)
	if err != nil {
		t.Fatalf("New(%s): %v", mode, err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// allNodes lists every node a mode's key lives on: node 0 for lua, all five
// for redlock.
func allNodes(mode dlock.Mode) []int {
	if mode == dlock.ModeRedlock {
		return []int{0, 1, 2, 3, 4}
	}
	return []int{0}
}

// majorityNodes lists enough of a mode's nodes to decide its outcome: node 0
// for lua, three of five for redlock.
func majorityNodes(mode dlock.Mode) []int {
	if mode == dlock.ModeRedlock {
		return []int{0, 1, 2}
	}
	return []int{0}
}

// isAcquire picks an acquire: lua's and fenced's script
// (scripts/acquire.lua), or redlock's SET NX.
func isAcquire(cmd redis.Cmder) bool { return cmd.Name() == "set" || isAcquireScript(cmd) }

var isAcquireScript = mustScript("acquire.lua", nil)

// isScript returns a matcher for the script in file (under scripts/), run
// alone or inside the waiting room's turns: its EVALSHA, or the EVAL that
// go-redis falls back to the first time a server sees it. With lastArg set, only calls whose last argument is lastArg.
func isScript(t *testing.T, file string, lastArg any) func(redis.Cmder) bool {
	t.Helper()
	m, err := scriptMatcher(file, lastArg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustScript is isScript for a package variable: it panics if file cannot
// be read.
func mustScript(file string, lastArg any) func(redis.Cmder) bool {
	m, err := scriptMatcher(file, lastArg)
	if err != nil {
		panic(err)
	}
	return m
}

func scriptMatcher(file string, lastArg any) (func(redis.Cmder) bool, error) {
	body, err := os.ReadFile("scripts/" + file)
	if err != nil {
		return nil, err
	}
	sum := sha1.Sum(body)
	shas := append([]string{hex.EncodeToString(sum[:])}, dlock.RunsAs(file)...) // itself, or with turns around it
	return func(cmd redis.Cmder) bool {
		args := cmd.Args()
		if len(args) < 2 {
			return false
		}
		switch cmd.Name() {
		case "evalsha":
			if sha, _ := args[1].(string); !slices.Contains(shas, sha) {
				return false
			}
		case "eval":
			if src, _ := args[1].(string); !strings.Contains(src, string(body)) {
				return false
			}
		default:
			return false
		}
		return lastArg == nil || args[len(args)-1] == lastArg
	}, nil
}

// isRefresh picks the refresh script (a Refresh or a watchdog renewal).
func isRefresh(t *testing.T) func(redis.Cmder) bool { return isScript(t, "refresh.lua", nil) }

// isRefreshTo picks the refresh script extending the lock to ttl.
func isRefreshTo(t *testing.T, ttl time.Duration) func(redis.Cmder) bool {
	return isScript(t, "refresh.lua", ttl.Milliseconds())
}

// isRelease picks the release script (a Release or an undo).
func isRelease(t *testing.T) func(redis.Cmder) bool { return isScript(t, "release.lua", nil) }

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

// countHits counts the commands match picks that have answered.
type countHits struct {
	match func(redis.Cmder) bool
	hits  atomic.Int64
	last  atomic.Int64 // when the last hit answered, in Unix nanoseconds
}

func (h *countHits) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countHits) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.match(cmd) {
			h.last.Store(time.Now().UnixNano())
			h.hits.Add(1)
		}
		return err
	}
}

func (h *countHits) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// afterFirst runs fn once, right after the first command match picks has
// answered, before its caller sees the answer.
type afterFirst struct {
	match func(redis.Cmder) bool
	fn    func()
	once  sync.Once
}

func (h *afterFirst) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *afterFirst) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.match(cmd) {
			h.once.Do(h.fn)
		}
		return err
	}
}

func (h *afterFirst) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
