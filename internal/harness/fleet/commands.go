package fleet

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/redisopt"
)

// ClusterCommands reads how many commands each master of a Redis Cluster
// has served (tally.CommandMeter): the sum of INFO commandstats' calls
// on every master, less the bookkeeping commands (tally.CommandCalls),
// by the master's address. Every client of the cluster counts, not only
// this fleet's shops: on a cluster other programs share, their commands
// land in the figures too. It is safe for concurrent use.
type ClusterCommands struct {
	// Addrs are nodes of the cluster, any of them.
	Addrs []string
}

// Describe implements tally.CommandMeter.
func (c ClusterCommands) Describe() string {
	return fmt.Sprintf("INFO commandstats on each master of the Redis Cluster %s", strings.Join(c.Addrs, ","))
}

// Commands implements tally.CommandMeter. It reads the slot map afresh
// at each call, so a replica promoted since the last is read as a master.
func (c ClusterCommands) Commands(ctx context.Context) (map[string]int64, error) {
	cl := redis.NewClusterClient(redisopt.Cluster(c.Addrs, 0, redisopt.Settings{}))
	defer cl.Close()
	var mu sync.Mutex
	out := map[string]int64{}
	err := cl.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		info, err := m.Info(ctx, "commandstats").Result()
		if err != nil {
			return fmt.Errorf("fleet: INFO commandstats on %s: %w", m.Options().Addr, err)
		}
		mu.Lock()
		out[m.Options().Addr] = tally.CommandCalls(info)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MasterOf implements tally.MasterFinder: the address of the master
// that serves product's keys, all under its hash tag (order.ProductKey).
func (c ClusterCommands) MasterOf(ctx context.Context, product string) (string, error) {
	cl := redis.NewClusterClient(redisopt.Cluster(c.Addrs, 0, redisopt.Settings{}))
	defer cl.Close()
	m, err := cl.MasterForKey(ctx, order.ProductKey(product))
	if err != nil {
		return "", fmt.Errorf("fleet: the master of %s: %w", product, err)
	}
	return m.Options().Addr, nil
}
