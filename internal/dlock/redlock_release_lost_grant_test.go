package dlock_test

import (
	"context"
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// inFlightSET makes the acquire's SET outlive its caller: the client gives
// up at once (a read timeout), while the request is still on the wire, and
// the server runs it only when gate is closed: a retransmitted packet that
// lands after requests sent later on other connections.
type inFlightSET struct {
	gate   chan struct{}
	landed chan struct{}
	on     atomic.Bool
}

func (h *inFlightSET) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *inFlightSET) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.on.Load() || cmd.Name() != "set" {
			return next(ctx, cmd)
		}
		h.on.Store(false)
		late := redis.NewCmd(context.Background(), cmd.Args()...)
		go func() {
			<-h.gate
			_ = next(context.Background(), late)
			close(h.landed)
		}()
		err := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
		cmd.SetErr(err)
		return err
	}
}

func (h *inFlightSET) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// failRelease makes release.lua fail on its client while on: a node that
// cannot be reached at release time.
type failRelease struct {
	match func(redis.Cmder) bool
	on    atomic.Bool
}

func (h *failRelease) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failRelease) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() && h.match(cmd) {
			err := errors.New("injected: node unreachable")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *failRelease) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRedlockReleaseDoesNotCountALostGrantAsFree: a release may count a
// node as free when its acquire answered "held", not when the acquire's
// reply was lost, for that SET may still land. Nodes 0-2 grant; the SETs to nodes 3 and 4 are still on the
// wire when the client gives up on them. The release deletes the token on
// node 0, fails on nodes 1 and 2, and finds nothing on 3 and 4 (the SETs
// have not landed yet): three "free" nodes, a majority, so Release
// returns nil and announces the lock free. Then the SETs land: the
// released token holds 4 of 5 nodes for the rest of its TTL, and nobody
// can take the lock that Release said was free. So a node whose acquire
// reply was lost counts only if the release deleted the token there.
func TestRedlockReleaseDoesNotCountALostGrantAsFree(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		key := r.Key("lost-grant-counted-free")
		const ttl = 30 * time.Second
		cs := clients(t, r)
		gate, landed := make(chan struct{}), []chan struct{}{}
		for _, i := range []int{3, 4} {
			h := &inFlightSET{gate: gate, landed: make(chan struct{})}
			h.on.Store(true)
			cs[i].AddHook(h)
			landed = append(landed, h.landed)
		}
		fail := &failRelease{match: isRelease(t)}
		for _, i := range []int{1, 2} {
			cs[i].AddHook(fail)
		}
		a := dlock.NewRedlock(cs)
		defer func() { _ = a.Close() }()
		l, err := a.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		token := l.Token()
		fail.on.Store(true)
		relErr := l.Release(ctx)
		close(gate)
		for _, c := range landed {
			<-c
		}
		holding, of := tokenOn(t, r, dlock.ModeRedlock, key, token)
		t.Logf("Release: %v; the released token holds %d of %d nodes", relErr, holding, of)
		if relErr == nil && holding > of/2 {
			b := dlock.NewRedlock(clients(t, r))
			defer func() { _ = b.Close() }()
			_, berr := b.TryLock(ctx, key, ttl)
			t.Errorf("Release returned nil (token off a majority), but the released token holds %d of %d nodes "+
				"for the rest of its %v TTL; another TryLock: %v", holding, of, ttl, berr)
		}
	})
}
