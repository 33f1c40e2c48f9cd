package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/migrations"
)

// EmbeddedRedisNodes is how many in-process Redis servers OpenBackends
// starts when no Redis address is given: five, as Redlock wants.
const EmbeddedRedisNodes = 5

// EmbeddedEtcdMembers is how many members the in-process etcd cluster
// OpenBackends starts when no endpoint is given has: three, the smallest
// cluster that survives the loss of a member.
const EmbeddedEtcdMembers = 3

// Backends are the database and the Redis nodes that any number of shops
// share. Fields are read-only after OpenBackends; the value is safe for
// concurrent use. Tests may build one by hand from their own backends
// (NewShop reads DB, RedisAddrs, RedisMaster, EtcdEndpoints and Net).
type Backends struct {
	// DB is the database, schema applied. Shops share its pool.
	DB *gorm.DB
	// RedisAddrs are the Redis nodes, in order; node 0 serves lua, naive,
	// fenced, dedupe and redis-decr unless RedisMaster is set. Each shop
	// dials its own clients to them.
	RedisAddrs []string
	// RedisMaster, when set, is the Sentinel-managed master that serves
	// lua, naive, fenced, dedupe and redis-decr instead of node 0. Each
	// shop opens its own failover client to it.
	RedisMaster SentinelMaster
	// RedisCluster, when set, names nodes of the Redis Cluster that serves
	// lua, naive, fenced, dedupe, redis-decr and redis-queue instead of
	// node 0 (any node will do; the client learns the others). Each shop
	// opens its own cluster client to it.
	RedisCluster []string
	// Embedded is the in-process Redis, nil when RedisAddrs are real
	// servers. Tests and the load generator use it to stop nodes.
	Embedded *embedded.Redis
	// SQLite is the embedded database, nil when DB is MySQL.
	SQLite *embedded.SQLite
	// EtcdEndpoints are the etcd cluster's members, for strategy etcd.
	// Each shop opens its own client to them.
	EtcdEndpoints []string
	// EmbeddedEtcd is the in-process etcd cluster, nil when EtcdEndpoints
	// are a real cluster's.
	EmbeddedEtcd *embedded.Etcd
	// ZooKeeper are the ensemble's members (host:port each), for strategy
	// zookeeper; empty means none. Each shop opens its own session.
	ZooKeeper []string
	// Net is the simulated network every shop's links to these backends
	// go through (network.go); nil, the default, delays nothing.
	Net *netsim.Network
}

// OpenBackends opens what cfg names, each part independently: MySQL when
// cfg.MySQLDSN is set, else an embedded SQLite file in a temporary
// directory; the Redis nodes of cfg.RedisAddrs, else EmbeddedRedisNodes
// embedded servers; the etcd cluster of cfg.EtcdEndpoints, else an embedded
// one of EmbeddedEtcdMembers. It applies pending migrations and logs what it chose
// and where (never a password). The caller must Close the Backends after
// every shop on them is closed.
//
// cfg.RedisMaster, if set, is recorded as given: lua, naive, fenced, dedupe
// and redis-decr use it, and redlock the nodes above, embedded ones if
// none are named. cfg.RedisCluster, if set, takes that role instead, once
// one of its nodes answered that it is a cluster node.
//
// Errors: a malformed DSN or Redis address (database.ErrInvalidDSN,
// ErrInvalidRedisAddr), half a Sentinel master
// (ErrIncompleteSentinelMaster), both a master and a cluster
// (ErrTwoSingleRedis), a cluster none of whose nodes answers
// (ErrClusterUnreachable) or that is no cluster (ErrNotACluster), an
// unreachable database (database.ErrUnavailable), a failed migration.
// Nothing is left open on error. Redis nodes and Sentinels are not
// contacted here: a node that is down at start only makes /readyz say so.
func OpenBackends(ctx context.Context, cfg Config) (_ *Backends, err error) {
	log := cfg.logger()
	for _, a := range cfg.RedisAddrs {
		if err := CheckRedisAddr(a); err != nil {
			return nil, err
		}
	}
	if err := CheckZooKeeper(cfg.ZooKeeper); err != nil {
		return nil, err
	}
	if err := cfg.RedisMaster.Check(); err != nil {
		return nil, err
	}
	if err := checkClusterAddrs(cfg.RedisCluster, cfg.RedisMaster); err != nil {
		return nil, err
	}
	if len(cfg.RedisCluster) > 0 {
		state, err := checkCluster(ctx, cfg.RedisCluster)
		if err != nil {
			return nil, err
		}
		if state != "ok" {
			log.Warn("redis: the Redis Cluster's state is not ok; /readyz says so until it is", "cluster_state", state)
		}
	}
	b := &Backends{}
	if !cfg.RTT.IsZero() {
		b.Net = netsim.New(cfg.RTT)
		log.Info("network: a simulated round-trip time on every link from a shop to its backends", "rtt", cfg.RTT.String())
	}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()

	if err := b.openDB(ctx, cfg.MySQLDSN, log); err != nil {
		return nil, err
	}
	if err := migrations.Apply(ctx, b.DB); err != nil {
		return nil, fmt.Errorf("app: apply migrations: %w", err)
	}
	if err := b.openRedis(cfg.RedisAddrs, cfg.RedisMaster, cfg.RedisCluster, log); err != nil {
		return nil, err
	}
	if err := b.openEtcd(cfg.EtcdEndpoints, log); err != nil {
		return nil, err
	}
	if len(cfg.ZooKeeper) > 0 {
		b.ZooKeeper = append([]string(nil), cfg.ZooKeeper...)
		log.Info("zookeeper: external ensemble", "servers", strings.Join(cfg.ZooKeeper, ","))
	}
	return b, nil
}

// openDB opens MySQL when dsn is set, else an embedded SQLite file.
func (b *Backends) openDB(ctx context.Context, dsn string, log *slog.Logger) error {
	if dsn == "" {
		lite, err := embedded.OpenSQLite(ctx, SQLiteLink(b.Net))
		if err != nil {
			return fmt.Errorf("app: embedded database: %w", err)
		}
		b.SQLite, b.DB = lite, lite.DB
		log.Info("database: embedded SQLite (no --mysql-dsn given); data is lost on exit", "path", lite.Path)
		return nil
	}
	cfg, err := database.MySQLConfig(dsn)
	if err != nil {
		return fmt.Errorf("app: --mysql-dsn: %w", err)
	}
	db, err := database.OpenMySQL(ctx, dsn, MySQLLink(b.Net))
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	b.DB = db
	log.Info("database: MySQL", "addr", cfg.Addr, "database", cfg.DBName, "user", cfg.User)
	return nil
}

// openRedis records the nodes (checked by OpenBackends) or starts embedded
// ones, and records the Sentinel-managed master or the cluster, if any.
func (b *Backends) openRedis(addrs []string, master SentinelMaster, cluster []string, log *slog.Logger) error {
	if len(cluster) > 0 {
		b.RedisCluster = append([]string(nil), cluster...)
		log.Info("redis: a Redis Cluster serves lua, naive, fenced, dedupe, redis-decr and redis-queue, each product on its slot's master; redlock keeps its own nodes",
			"cluster", strings.Join(cluster, ","))
	}
	if !master.IsZero() {
		b.RedisMaster = SentinelMaster{Sentinels: append([]string(nil), master.Sentinels...), Name: master.Name}
		log.Info("redis: a Sentinel-managed master serves lua, naive, fenced, dedupe and redis-decr; redlock keeps its own nodes",
			"master", master.Name, "sentinels", strings.Join(master.Sentinels, ","))
	}
	if len(addrs) == 0 {
		r, err := embedded.StartRedis(EmbeddedRedisNodes)
		if err != nil {
			return fmt.Errorf("app: embedded redis: %w", err)
		}
		b.Embedded, b.RedisAddrs = r, r.Addrs()
		log.Info("redis: embedded in-process servers (no --redis given)", "nodes", len(b.RedisAddrs), "addrs", strings.Join(b.RedisAddrs, ","))
		return nil
	}
	b.RedisAddrs = append([]string(nil), addrs...)
	if master.IsZero() && len(cluster) == 0 {
		log.Info("redis: external nodes; node 0 serves lua, naive, fenced, dedupe and redis-decr", "nodes", len(addrs), "addrs", strings.Join(addrs, ","))
	} else {
		log.Info("redis: external nodes for redlock", "nodes", len(addrs), "addrs", strings.Join(addrs, ","))
	}
	if len(addrs) < 3 || len(addrs)%2 == 0 {
		log.Warn("redis: redlock wants an odd number of at least 3 independent nodes (5 recommended)", "nodes", len(addrs))
	}
	return nil
}

// openEtcd records the cluster's endpoints or starts an embedded cluster.
func (b *Backends) openEtcd(endpoints []string, log *slog.Logger) error {
	if len(endpoints) == 0 {
		e, err := embedded.StartEtcd(EmbeddedEtcdMembers)
		if err != nil {
			return fmt.Errorf("app: embedded etcd: %w", err)
		}
		b.EmbeddedEtcd, b.EtcdEndpoints = e, e.Endpoints()
		log.Info("etcd: embedded in-process cluster (no --etcd given)", "members", e.Len(), "endpoints", strings.Join(b.EtcdEndpoints, ","))
		return nil
	}
	b.EtcdEndpoints = append([]string(nil), endpoints...)
	log.Info("etcd: external cluster", "endpoints", strings.Join(endpoints, ","))
	return nil
}

// ErrInvalidRedisAddr is wrapped by errors about a malformed Redis address.
var ErrInvalidRedisAddr = errors.New("app: invalid redis address")

// CheckRedisAddr reports whether addr is a host:port with a numeric port,
// returning an error wrapping ErrInvalidRedisAddr if not.
func CheckRedisAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" || strings.Trim(port, "0123456789") != "" {
		return fmt.Errorf("%w %q: want host:port", ErrInvalidRedisAddr, addr)
	}
	return nil
}

// checkClusterAddrs checks cluster's addresses, and that a cluster and a
// Sentinel-managed master are not both given.
func checkClusterAddrs(cluster []string, master SentinelMaster) error {
	for _, a := range cluster {
		if err := CheckRedisAddr(a); err != nil {
			return fmt.Errorf("--redis-cluster: %w", err)
		}
	}
	if len(cluster) > 0 && !master.IsZero() {
		return fmt.Errorf("%w: give --redis-cluster or --redis-sentinel, not both", ErrTwoSingleRedis)
	}
	return nil
}

// Close closes the database, then the network, and stops the embedded
// servers, if any. Call it
// after every shop on the Backends is closed. It is safe to call more than
// once; it is not safe to call concurrently with itself.
func (b *Backends) Close() error {
	var errs []error
	switch {
	case b.SQLite != nil:
		errs = append(errs, b.SQLite.Close()) // closes DB and removes the file
	case b.DB != nil:
		if sqlDB, err := b.DB.DB(); err == nil {
			errs = append(errs, sqlDB.Close())
		}
	}
	b.SQLite, b.DB = nil, nil
	b.Net.Close()
	b.Net = nil
	if b.Embedded != nil {
		b.Embedded.Close()
		b.Embedded = nil
	}
	if b.EmbeddedEtcd != nil {
		b.EmbeddedEtcd.Close()
		b.EmbeddedEtcd = nil
	}
	return errors.Join(errs...)
}
