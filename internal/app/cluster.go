package app

// A Redis Cluster for the roles that use one Redis (--redis-cluster).
//
// lua, naive and fenced lock on one Redis, and the dedupe lock,
// redis-decr's stock and redis-queue's streams live there too. With
// --redis-cluster that Redis is a Redis Cluster: go-redis's cluster client
// sends each command to the master of its key's slot. Every key of a
// product carries the product's id as a hash tag ("{p1}"), so all of a
// product's keys, and every key one script touches, share one slot, on one
// master; many products spread over the masters, one hot product does not.
//
// What it does not promise is what a Sentinel-managed master does not
// either: replication between a master and its replica is asynchronous,
// and the replica the cluster promotes may never have heard of a lock its
// master granted. Nor may a Cluster's masters serve as Redlock's nodes:
// they are not independent (one failover domain, whose masters vote on
// each other's failovers; a key's slot, not the client, decides which
// master holds it). Redlock keeps its five masters (--redis).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/redisopt"
)

// Errors of a Redis Cluster named by Config.RedisCluster, wrapped by
// OpenBackends' error, whose message names the flag and the nodes.
var (
	// ErrClusterUnreachable: none of the nodes answered.
	ErrClusterUnreachable = errors.New("app: no Redis Cluster node answers")
	// ErrNotACluster: a node answered that it is not in cluster mode.
	ErrNotACluster = errors.New("app: not a Redis Cluster node")
	// ErrTwoSingleRedis: both a cluster and a Sentinel-managed master
	// were named for the roles that use one Redis.
	ErrTwoSingleRedis = errors.New("app: a Redis Cluster and a Sentinel-managed master both named for the single-node roles")
)

// clusterCheckWithin bounds OpenBackends' question to the cluster's nodes.
const clusterCheckWithin = 2 * time.Second

// clusterReloadEvery is how often a shop's cluster client asks the cluster
// where its slots are, at most: after a failover the promoted replica's
// slots answer within about this long. go-redis's default is ten seconds.
const clusterReloadEvery = time.Second

// checkCluster asks every node of addrs at once whether it is a cluster
// node, and returns nil once one says so (a cluster whose state is not ok
// is only logged: /readyz says so until it is). Errors: ErrNotACluster if
// a node answers with an error (cluster support disabled, an unknown
// command), ErrClusterUnreachable if none answered.
func checkCluster(ctx context.Context, addrs []string) (state string, err error) {
	ctx, cancel := context.WithTimeout(ctx, clusterCheckWithin)
	defer cancel()
	type answer struct {
		addr, state string
		err         error
	}
	answers := make(chan answer, len(addrs))
	for _, addr := range addrs {
		go func() {
			c := newRedisClients([]string{addr}, nil)[0]
			defer c.Close()
			info, err := c.ClusterInfo(ctx).Result()
			state := ""
			for _, line := range strings.Split(info, "\r\n") {
				if v, ok := strings.CutPrefix(line, "cluster_state:"); ok {
					state = v
				}
			}
			answers <- answer{addr, state, err}
		}()
	}
	var errs []string
	for range addrs {
		a := <-answers
		switch {
		case a.err == nil:
			return a.state, nil
		case strings.Contains(a.err.Error(), "cluster support disabled"):
			return "", fmt.Errorf("--redis-cluster: %w: %s answers that cluster support is disabled (cluster-enabled no); name the nodes of a Redis Cluster, or give independent masters to --redis", ErrNotACluster, a.addr)
		case errors.As(a.err, new(redis.Error)):
			return "", fmt.Errorf("--redis-cluster: %w: %s answers CLUSTER INFO with %q", ErrNotACluster, a.addr, a.err.Error())
		}
		errs = append(errs, a.addr+": "+a.err.Error())
	}
	slices.Sort(errs)
	return "", fmt.Errorf("--redis-cluster: %w within %v (%s)", ErrClusterUnreachable, clusterCheckWithin, strings.Join(errs, "; "))
}

// newClusterClient returns go-redis's cluster client on the nodes addrs,
// with the settings of the other clients (redis.go), per node, never
// following a redirect (redisopt.Cluster) and reloading the slots every
// clusterReloadEvery at most. It dials nothing yet; then every node, those
// it learns too, through dial. The caller closes it.
func newClusterClient(addrs []string, dial dialer) *redis.ClusterClient {
	return redis.NewClusterClient(redisopt.Cluster(addrs, clusterReloadEvery, redisSettings(dial)))
}

// clusterReady is a shop's cluster, as /readyz asks it (httpapi.RedisMaster).
type clusterReady struct{ c *redis.ClusterClient }

// Addr asks a node for the cluster's state and slots, and returns the
// masters' addresses, sorted and comma-separated; an error if the state is
// not ok or no node answers.
func (r clusterReady) Addr(ctx context.Context) (string, error) {
	info, err := r.c.ClusterInfo(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("the cluster does not answer: %v", err)
	}
	if !strings.Contains(info, "cluster_state:ok") {
		return "", errors.New("the cluster's state is not ok (a master is failing, or slots are not served)")
	}
	slots, err := r.c.ClusterSlots(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("the cluster's slots: %v", err)
	}
	var masters []string
	for _, s := range slots {
		if len(s.Nodes) > 0 && !slices.Contains(masters, s.Nodes[0].Addr) {
			masters = append(masters, s.Nodes[0].Addr)
		}
	}
	slices.Sort(masters)
	return strings.Join(masters, ","), nil
}

// Ping pings every master through the shop's own client.
func (r clusterReady) Ping(ctx context.Context) error {
	return r.c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() })
}
