// Package fleet is the shops a scenario attacks and the control it has
// over them: StartFleet starts them in this process or as child processes
// (with the embedded backends or real ones), ExternalFleet names someone
// else's; NodeKiller and NodeRestarter take their Redis nodes and etcd
// members down; KillShop and RestartShop kill and restart a child shop;
// API calls a shop's admin routes.
package fleet

import (
	"context"
	"net/http"
	"time"

	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/harness/zkproc"
)

// RedisNodes is how many Redis nodes --redlock-kill and --redis-restart
// count on: five, as Redlock, the embedded backends and compose.yaml have.
const RedisNodes = 5

// EtcdMembers is the size of the etcd cluster --etcd-kill counts on: three,
// as the embedded cluster and compose.yaml have.
const EtcdMembers = 3

// ZooKeeperMembers is the size of the ensemble --zookeeper-kill counts
// on: three, as zkproc starts and compose.yaml has.
const ZooKeeperMembers = zkproc.Members

// Fleet is what the scenario attacks: the shop replicas' base URLs, the
// admin token they accept, and, optionally, control over the five Redis
// nodes behind them. A Fleet is read-only once built and safe for
// concurrent use.
type Fleet struct {
	// Targets are the shops' base URLs (http://host:port); requests are
	// spread over them.
	Targets []string
	// AdminToken is sent as "Authorization: Bearer" on the admin routes.
	AdminToken string
	// BuyerSecret, if set, is the key the shops check buyers' tokens
	// with: the crowd signs each click's X-Buyer-Token with it. Empty:
	// the shops run open and the clicks carry no token.
	BuyerSecret string
	// Backend says in a few words what the shops run on, for the report.
	Backend string
	// DoorSlots is how many orders the shops work on at once, all told
	// (shops × each one's --max-in-flight); 0 if unknown or unlimited.
	DoorSlots int
	// Nodes takes Redis nodes down for --redlock-kill; nil if unknown.
	Nodes NodeKiller
	// EtcdMembers takes etcd members down for --etcd-kill; nil if unknown.
	EtcdMembers NodeKiller
	// ZooKeeperMembers takes the members of the ensemble the fleet
	// started down for --zookeeper-kill; nil for an ensemble named.
	ZooKeeperMembers NodeKiller
	// Restarts restarts Redis nodes empty for --redis-restart; nil if
	// unknown. RedisAddrs are the nodes' own addresses, in node order,
	// where --redis-restart reads the product lock to choose its moment.
	Restarts   NodeRestarter
	RedisAddrs []string
	// Sentinels, if set, is the Sentinel-managed master and replica the
	// shops lock on (but for redlock), whose master --failover kills.
	Sentinels *redisproc.Set
	// Cluster, if set, is the Redis Cluster of the load generator's own
	// that the shops use for all but redlock, whose masters
	// --cluster-failover kills.
	Cluster *redisproc.Cluster
	// CPU reads the fleet's CPU time, for the cpu/order column; nil if
	// unknown.
	CPU tally.CPUMeter
	// Commands reads each Redis Cluster master's commands, for where a
	// row's load landed; nil without a cluster.
	Commands tally.CommandMeter
	// procs are the child shops of a process fleet (FleetConfig.Processes),
	// which --crash kills; nil otherwise.
	procs *shopProcs
	// close stops what StartEmbedded started; nil for external fleets.
	close func() error
}

// NodeKiller takes Redis nodes down and brings them back: the fault the
// redlock attack must survive. Implementations must be safe for concurrent
// use.
type NodeKiller interface {
	// Kill makes the nodes with the given indexes (0-based) unavailable for
	// about d, and returns a function that brings them back and returns
	// only once they are back (or ctx ends). Kill returns an error if a
	// node could not be taken down; the nodes it did take down are then
	// brought back before it returns.
	Kill(ctx context.Context, nodes []int, d time.Duration) (restore func(context.Context) error, err error)
	// Describe says how Kill takes a node down, for the report.
	Describe() string
}

// NodeRestarter restarts Redis nodes empty, as a Redis without
// persistence comes back after its process died: the fault of
// --redis-restart. Implementations must be safe for concurrent use.
type NodeRestarter interface {
	// Restart takes the nodes with the given indexes (0-based) down at
	// once, dropping every connection of the shops to them and at least
	// every key of product on them, keeps them down for delay, and lets
	// them serve again, empty. It returns once they do, or with an error
	// saying which node could not be restarted; it brings back the nodes
	// it took down even when ctx ends.
	Restart(ctx context.Context, nodes []int, delay time.Duration, product string) error
	// Describe says how Restart restarts a node, for the report.
	Describe() string
}

// ExternalFleet is a fleet that someone else started: shops at targets
// that accept token. redisAddrs, if given, are the five Redis nodes behind
// them, which --redlock-kill pauses with CLIENT PAUSE and --redis-restart
// empties of the product's keys and of their clients (droppedClients).
func ExternalFleet(targets []string, token string, redisAddrs []string) *Fleet {
	f := &Fleet{Targets: targets, AdminToken: token, Backend: "external shops",
		CPU: tally.ScrapeCPU{Targets: targets, Client: &http.Client{Timeout: 5 * time.Second}}}
	if len(redisAddrs) > 0 {
		f.Nodes = &pausedNodes{addrs: redisAddrs}
		f.Restarts, f.RedisAddrs = &droppedClients{addrs: redisAddrs}, redisAddrs
	}
	return f
}

// Close stops the shops and backends the fleet started, if any. It is safe
// to call on an external fleet and more than once.
func (f *Fleet) Close() error {
	if f == nil || f.close == nil {
		return nil
	}
	c := f.close
	f.close = nil
	return c()
}
