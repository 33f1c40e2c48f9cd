package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

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
			return nil, fmt.Errorf("scenario: redis node %d: only %d addresses given", i+1, len(p.addrs))
		}
		c := redis.NewClient(&redis.Options{Addr: p.addrs[i], MaxRetries: -1})
		err := c.Do(ctx, "CLIENT", "PAUSE", max(d.Milliseconds(), 1), "ALL").Err()
		c.Close()
		if err != nil {
			// The nodes paused so far resume by themselves at until.
			return nil, fmt.Errorf("scenario: pausing redis node %d at %s: %w", i+1, p.addrs[i], err)
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
			c := redis.NewClient(&redis.Options{Addr: p.addrs[i]})
			if err := c.Ping(ctx).Err(); err != nil {
				errs = append(errs, fmt.Errorf("scenario: redis node %d at %s after the pause: %w", i+1, p.addrs[i], err))
			}
			c.Close()
		}
		return errors.Join(errs...)
	}
	return restore, nil
}
