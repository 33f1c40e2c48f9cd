// Package app owns the wiring of a shop: opening the backends (the real
// MySQL and Redis nodes, or the embedded ones when none are named, and a
// Sentinel-managed Redis master or a Redis Cluster when one is named:
// sentinel.go, cluster.go), and
// building one shop instance on them — its Redis clients, one locker per
// lock mode, the order service and the HTTP router — and serving it with
// timeouts and a graceful shutdown. It also keeps the table of the shops
// running on a database, which stops a shop from starting on lock servers
// that another live shop there does not share (registry.go).
//
// cmd/shop runs one Shop; cmd/loadgen runs three on the same Backends, each
// with its own clients and lockers exactly as three processes would have.
package app

import (
	"log/slog"
	"time"

	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/internal/order"
)

// Config says which backends to use and how a shop behaves. The zero value
// is a valid configuration: embedded backends, admin routes closed, default
// lock wait and in-flight limit, slog.Default(). Where a shop listens is not here: Serve takes
// a listener, which its caller opens (cmd/shop on --addr, tests on a free
// port).
type Config struct {
	// MySQLDSN selects a real MySQL/MariaDB database
	// (user:pass@tcp(host:3306)/flashsale). Empty means an embedded SQLite
	// file in a fresh temporary directory.
	MySQLDSN string
	// RedisAddrs selects real Redis nodes (host:port each; five for
	// Redlock). Unless RedisMaster is set, the first node also serves the
	// lua, naive, fenced and dedupe locks and redis-decr's stock. Empty
	// means five embedded in-process Redis servers.
	RedisAddrs []string
	// RedisMaster, when set, selects a Sentinel-managed Redis master for
	// what the first node serves otherwise (see sentinel.go); Redlock
	// keeps RedisAddrs, or the embedded servers when that is empty. The
	// zero value means none.
	RedisMaster SentinelMaster
	// RedisCluster, when set, names nodes of a Redis Cluster (host:port
	// each; any of its nodes will do) for what the first node serves
	// otherwise (see cluster.go); Redlock keeps RedisAddrs, or the
	// embedded servers. Not with RedisMaster. Empty means none.
	RedisCluster []string
	// EtcdEndpoints selects a real etcd cluster for strategy etcd (its
	// members' client URLs, or host:port each). Empty means an embedded
	// three-member cluster in the process.
	EtcdEndpoints []string
	// ZooKeeper selects a ZooKeeper ensemble for strategy zookeeper (its
	// members' host:port each). Empty means none: no ZooKeeper server runs
	// inside a Go process, so the shop then sells no zookeeper product.
	ZooKeeper []string
	// RTT is the round-trip time the shop's links to its backends get
	// (network.go): zero, the default, adds none.
	RTT netsim.RTT
	// AdminToken guards the admin routes; empty closes them.
	AdminToken string
	// BuyerSecret, if not empty, is the key the shops share for the
	// buyers' tokens (package buyertoken): placing an order then needs
	// one for its buyer (internal/httpapi/buyer.go). Empty: open, anyone
	// may act for any buyer, as the demo runs by default.
	BuyerSecret string
	// NaiveExpiry makes the shop's sweep of unpaid orders the textbook's
	// broken one (order.Options.NaiveExpiry), for the workshop.
	NaiveExpiry bool
	// ClockAhead sets the shop's own clock this far ahead of the machine's
	// (order.Options.Now), for the workshop: the sweep of unpaid orders
	// ignores it, as it reads the database's clock; the naive one
	// (NaiveExpiry) expires orders that much early.
	ClockAhead time.Duration
	// LockWait is the longest an order waits for its product lock; zero
	// means order.DefaultLockWait.
	LockWait time.Duration
	// MaxInFlightOrders caps the orders one shop works on at once, but
	// for a batched product's, which queue in their batch; more queue at
	// the door in arrival order for up to LockWait, then get 503
	// busy (see internal/httpapi/admission.go for why). Zero means
	// DefaultMaxInFlightOrders; negative means no limit.
	MaxInFlightOrders int
	// BuyerRate, if positive, is how many orders per second one buyer may
	// send to one shop, in bursts of BuyerBurst (at least 1); the clicks
	// beyond get 429 rate_limited (internal/httpapi/ratelimit.go). Zero:
	// no limit, the default: the lesson rows' crowds click 1 to 3 times
	// within a few ms, which any useful limit would cut.
	BuyerRate  float64
	BuyerBurst int
	// ShutdownTimeout bounds how long Serve waits for in-flight requests
	// after its context ends; zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Logger receives what the shop chose and every request; nil means
	// slog.Default().
	Logger *slog.Logger
}

// DefaultShutdownTimeout is how long Serve waits for in-flight requests when
// Config.ShutdownTimeout is zero. It covers an order that waited the whole
// default lock wait (5 s) and then ran its critical section.
const DefaultShutdownTimeout = 15 * time.Second

// DefaultMaxInFlightOrders is Config.MaxInFlightOrders when zero. Orders for
// one hot product run their critical sections one at a time anyway; a few
// in flight per shop keep the lock busy without flooding Redis.
const DefaultMaxInFlightOrders = 8

// MaxInFlight is MaxInFlightOrders with zero replaced by the default.
// A negative value passes through: httpapi.Deps reads it as no limit too.
func (c Config) MaxInFlight() int {
	if c.MaxInFlightOrders == 0 {
		return DefaultMaxInFlightOrders
	}
	return c.MaxInFlightOrders
}

func (c Config) lockWait() time.Duration {
	if c.LockWait <= 0 {
		return order.DefaultLockWait
	}
	return c.LockWait
}

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.Default()
	}
	return c.Logger
}

func (c Config) shutdownTimeout() time.Duration {
	if c.ShutdownTimeout <= 0 {
		return DefaultShutdownTimeout
	}
	return c.ShutdownTimeout
}
