package fleet

// The ways --redlock-kill and --etcd-kill take a node down, one per kind
// of fleet: NodeKiller's implementations.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/redisopt"
)

// stoppedNodes takes embedded nodes down by closing them (clients get
// connection refused at once) and brings them back on the same port.
type stoppedNodes struct{ r *embedded.Redis }

// Describe implements NodeKiller.
func (s *stoppedNodes) Describe() string {
	return "embedded nodes closed (connection refused), restarted on the same port after the attack"
}

// Kill implements NodeKiller.
func (s *stoppedNodes) Kill(_ context.Context, nodes []int, _ time.Duration) (func(context.Context) error, error) {
	for _, i := range nodes {
		if i < 0 || i >= s.r.Len() {
			return nil, fmt.Errorf("fleet: redis node %d: only %d nodes", i+1, s.r.Len())
		}
	}
	for _, i := range nodes {
		s.r.Stop(i)
	}
	return func(context.Context) error {
		var errs []error
		for _, i := range nodes {
			errs = append(errs, s.r.Restart(i))
		}
		return errors.Join(errs...)
	}, nil
}

// stoppedMembers takes embedded etcd members down by stopping them and
// brings them back on the same ports with their data.
type stoppedMembers struct{ e *embedded.Etcd }

// Describe implements NodeKiller.
func (s *stoppedMembers) Describe() string {
	return "embedded etcd members stopped, restarted with their data after the attack"
}

// Kill implements NodeKiller.
func (s *stoppedMembers) Kill(_ context.Context, members []int, _ time.Duration) (func(context.Context) error, error) {
	for _, i := range members {
		if i < 0 || i >= s.e.Len() {
			return nil, fmt.Errorf("fleet: etcd member %d: only %d members", i+1, s.e.Len())
		}
	}
	s.e.Crash(members...) // together, as crashes (see Crash)
	return func(context.Context) error {
		// Together: a member alone cannot rejoin a cluster without a quorum.
		errs := make([]error, len(members))
		var wg sync.WaitGroup
		for k, i := range members {
			wg.Go(func() { errs[k] = s.e.Restart(i) })
		}
		wg.Wait()
		return errors.Join(errs...)
	}, nil
}

// pausedNodes takes external Redis nodes down with CLIENT PAUSE <ms> ALL:
// the node keeps its port open but answers no client until the pause ends,
// which a client sees as a node that stopped responding (its per-node
// timeout fires). The pause ends by itself, so nothing is left broken if the
// load generator dies; CLIENT UNPAUSE would itself wait for the pause to end,
// so restore just waits for the deadline and checks the nodes answer again.
// Commands sent during the pause run when it ends: a late SET NX PX then
// leaves a lock key that expires after its TTL, as after any partition.
type pausedNodes struct {
	addrs []string
}

// Describe implements NodeKiller.
func (p *pausedNodes) Describe() string {
	return "external nodes paused with CLIENT PAUSE <ms> ALL (they resume by themselves)"
}

// Kill implements NodeKiller.
func (p *pausedNodes) Kill(ctx context.Context, nodes []int, d time.Duration) (func(context.Context) error, error) {
	until := time.Now().Add(d)
	for _, i := range nodes {
		if i < 0 || i >= len(p.addrs) {
			return nil, fmt.Errorf("fleet: redis node %d: only %d addresses given", i+1, len(p.addrs))
		}
		c := redis.NewClient(redisopt.Client(p.addrs[i], redisopt.Settings{}))
		err := c.Do(ctx, "CLIENT", "PAUSE", max(d.Milliseconds(), 1), "ALL").Err()
		c.Close()
		if err != nil {
			// The nodes paused so far resume by themselves at until.
			return nil, fmt.Errorf("fleet: pausing redis node %d at %s: %w", i+1, p.addrs[i], err)
		}
	}
	restore := func(ctx context.Context) error {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		var errs []error
		for _, i := range nodes {
			c := redis.NewClient(redisopt.Client(p.addrs[i], redisopt.Settings{}))
			if err := c.Ping(ctx).Err(); err != nil {
				errs = append(errs, fmt.Errorf("fleet: redis node %d at %s after the pause: %w", i+1, p.addrs[i], err))
			}
			c.Close()
		}
		return errors.Join(errs...)
	}
	return restore, nil
}
