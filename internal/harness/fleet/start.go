package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/netsim"
)

// DefaultShops is how many shop instances StartFleet runs when
// FleetConfig.Shops is zero: three, as the compose fleet has.
const DefaultShops = 3

// DefaultLockWait is the lock wait of the shops StartFleet runs when
// FleetConfig.LockWait is zero. It is shorter than the shop's own default
// (5 s) so that an overloaded lock shows as 503 lock_timeout within a
// second, instead of as latency that hides the other figures.
const DefaultLockWait = time.Second

// FleetConfig says what StartFleet starts. The zero value starts the
// embedded backends and three shops.
type FleetConfig struct {
	// Shops is the number of shop instances (zero: DefaultShops).
	Shops int
	// MySQLDSN and RedisAddrs select real backends, as app.Config's
	// fields do; empty means embedded. Ignored when Backends is set.
	MySQLDSN      string
	RedisAddrs    []string
	EtcdEndpoints []string
	// ZooKeeper names the ensemble for strategy zookeeper (host:port
	// each); empty means none. Used with Backends too, unless they name
	// one of their own.
	ZooKeeper []string
	// StartZooKeeper, without ZooKeeper, has StartFleet start a
	// three-member ensemble of its own first (zkproc: java and Debian's
	// zookeeper), its files in LogDir/zookeeper, and stop it after the shops.
	StartZooKeeper bool
	// Backends, if set, are used instead of opening new ones, and are not
	// closed by the fleet. Tests pass their own (see internal/harness/testenv).
	Backends *app.Backends
	// Nodes, if set, is how --redlock-kill takes nodes down. Otherwise the
	// embedded nodes are stopped and restarted, and real nodes paused.
	Nodes NodeKiller
	// RedisRestart readies the fleet for --redis-restart on real Redis
	// nodes: the shops then reach each node through a proxy of the
	// fleet's own, which can drop their connections (proxiedNodes).
	// Embedded nodes need none: they are restarted themselves.
	RedisRestart bool
	// Sentinels, if set, is a replicated Redis of the caller's own that
	// serves the shops' lua, naive, fenced, dedupe and redis-decr (redlock
	// keeps its five nodes): --failover kills its master. The caller
	// closes it, after the fleet.
	Sentinels *redisproc.Set
	// StartSentinels, without Sentinels, has StartFleet start such a set
	// of its own first (redis-server and redis-sentinel on the PATH), its
	// files in LogDir/redis (a temporary folder without LogDir), and
	// close it after the shops.
	StartSentinels bool
	// RedisCluster names nodes of a Redis Cluster that serves the shops'
	// lua, naive, fenced, dedupe, redis-decr and redis-queue, as
	// app.Config's field does; ignored with Cluster or StartCluster.
	RedisCluster []string
	// Cluster, if set, is a Redis Cluster of the caller's own that serves
	// them (cluster.go): --cluster-failover kills its masters. The caller
	// closes it, after the fleet.
	Cluster *redisproc.Cluster
	// StartCluster, without Cluster, has StartFleet start such a cluster
	// of its own first (redis-server and redis-cli on the PATH), its files
	// in LogDir/redis-cluster (a temporary folder without LogDir), with
	// ClusterNodeTimeout, and close it after the shops.
	StartCluster       bool
	ClusterNodeTimeout time.Duration
	// LockWait is the shops' product-lock wait (zero: DefaultLockWait).
	LockWait time.Duration
	// MaxInFlight is each shop's admission limit, as app.Config's
	// MaxInFlightOrders (zero: app.DefaultMaxInFlightOrders; negative: no
	// limit).
	MaxInFlight int
	// BuyerRate and BuyerBurst are each shop's per-buyer rate limit, as
	// app.Config's (zero: none).
	BuyerRate  float64
	BuyerBurst int
	// BuyerSecret, if set, makes the shops require buyers' tokens signed
	// with it (app.Config's); the Fleet carries it for the crowd to sign.
	BuyerSecret string
	// NaiveExpiry gives the shops the textbook's broken sweep of unpaid
	// orders (app.Config's), for the workshop.
	NaiveExpiry bool
	// ClockAhead sets shop 1's own clock this far ahead of the others'
	// (app.Config's), in-process shops only: two shops that disagree on
	// the time, for the workshop.
	ClockAhead time.Duration
	// RTT is the round-trip time on every link from a shop to its
	// backends, as app.Config's (zero: none). With Backends, their Net is
	// used as it is.
	RTT netsim.RTT
	// Logger receives the shops' logs (nil: discarded).
	Logger *slog.Logger
	// Processes runs each shop as a child process, this program
	// re-executed (procs.go), instead of in this process: what --crash
	// needs. The program must call ServeChildShop first thing when
	// IsChildShop. The children open the embedded SQLite file, or
	// MySQLDSN's database, or, with Backends, SQLitePath.
	Processes bool
	// SQLitePath, with Processes and Backends, is the file of Backends'
	// SQLite database, for the child shops to open.
	SQLitePath string
	// LogDir, with Processes, receives each shop's output as
	// shop-<n>.log (empty: discarded, but for the lines quoted when a shop
	// fails to start). Logger is not used by child shops.
	LogDir string
}

// StartFleet starts the backends (embedded by default) and cfg.Shops shop
// instances on 127.0.0.1 ports. Each shop is its own app.NewShop, with its
// own Redis clients and lockers, exactly as separate processes would be;
// they share the database and the Redis servers and nothing else.
//
// The caller must Close the fleet, which stops the shops (letting in-flight
// orders finish) and then the backends it opened. Errors come from
// app.OpenBackends and app.NewShop, or from listening on loopback; nothing is
// left running on error.
func StartFleet(ctx context.Context, cfg FleetConfig) (_ *Fleet, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	acfg := app.Config{
		MySQLDSN: cfg.MySQLDSN, RedisAddrs: cfg.RedisAddrs, RedisCluster: cfg.RedisCluster, EtcdEndpoints: cfg.EtcdEndpoints, ZooKeeper: cfg.ZooKeeper, AdminToken: token,
		LockWait: orDefault(cfg.LockWait, DefaultLockWait), MaxInFlightOrders: cfg.MaxInFlight, Logger: log,
		BuyerRate: cfg.BuyerRate, BuyerBurst: cfg.BuyerBurst, BuyerSecret: cfg.BuyerSecret, RTT: cfg.RTT,
		NaiveExpiry: cfg.NaiveExpiry,
	}
	f := &Fleet{AdminToken: token, BuyerSecret: cfg.BuyerSecret, CPU: tally.ProcessCPU{}}
	var closers []func() error
	f.close = func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()

	if cfg.StartSentinels && cfg.Sentinels == nil {
		set, closeSet, err := startSentinels(ctx, cfg.LogDir)
		if err != nil {
			return nil, err
		}
		closers = append(closers, closeSet) // after the shops, which lock on it
		cfg.Sentinels = set
	}
	if cfg.Sentinels != nil {
		acfg.RedisMaster = app.SentinelMaster{Sentinels: cfg.Sentinels.Sentinels(), Name: redisproc.MasterName}
	}
	if cfg.StartCluster && cfg.Cluster == nil {
		c, closeCluster, err := startCluster(ctx, cfg.LogDir, cfg.ClusterNodeTimeout)
		if err != nil {
			return nil, err
		}
		closers = append(closers, closeCluster) // after the shops, which lock on it
		cfg.Cluster = c
	}
	if cfg.Cluster != nil {
		acfg.RedisCluster = cfg.Cluster.Addrs()
	}
	if cfg.StartZooKeeper && len(cfg.ZooKeeper) == 0 {
		e, closeZK, err := startZooKeeper(ctx, cfg.LogDir)
		if err != nil {
			return nil, err
		}
		closers = append(closers, closeZK) // after the shops, which lock on it
		cfg.ZooKeeper, acfg.ZooKeeper = e.Servers(), e.Servers()
		f.ZooKeeperMembers = &killedMembers{e: e}
	}
	b := cfg.Backends
	if b == nil {
		if b, err = app.OpenBackends(ctx, acfg); err != nil {
			return nil, err
		}
		closers = append(closers, b.Close)
	}
	f.Backend = describeBackends(b, cfg.RedisRestart && b.Embedded == nil)
	if f.Sentinels = cfg.Sentinels; f.Sentinels != nil && b.RedisMaster.IsZero() {
		withMaster := *b // the caller's Backends, without the master
		withMaster.RedisMaster = acfg.RedisMaster
		b = &withMaster
	}
	if f.Sentinels != nil {
		f.Backend += fmt.Sprintf(" + a Sentinel-managed master %s with one replica and 3 Sentinels (lua, naive, fenced, dedupe, redis-decr)", f.Sentinels.Master().Addr)
	}
	if f.Cluster = cfg.Cluster; f.Cluster != nil && len(b.RedisCluster) == 0 {
		withCluster := *b // the caller's Backends, without the cluster
		withCluster.RedisCluster = acfg.RedisCluster
		b = &withCluster
	}
	if len(b.RedisCluster) > 0 {
		f.Backend += fmt.Sprintf(" + a Redis Cluster (%s; lua, naive, fenced, dedupe, redis-decr, redis-queue)", strings.Join(b.RedisCluster, ","))
		f.Commands = ClusterCommands{Addrs: b.RedisCluster}
	}
	if len(cfg.ZooKeeper) > 0 && len(b.ZooKeeper) == 0 {
		withZK := *b // the caller's Backends, without the ensemble
		withZK.ZooKeeper = cfg.ZooKeeper
		b = &withZK
	}
	if len(b.ZooKeeper) > 0 {
		f.Backend += fmt.Sprintf(" + a ZooKeeper ensemble (%s; zookeeper)", strings.Join(b.ZooKeeper, ","))
	}
	switch {
	case cfg.Nodes != nil:
		f.Nodes = cfg.Nodes
	case b.Embedded != nil:
		f.Nodes = &stoppedNodes{r: b.Embedded}
	default:
		f.Nodes = &pausedNodes{addrs: b.RedisAddrs}
	}
	if b.EmbeddedEtcd != nil {
		f.EtcdMembers = &stoppedMembers{e: b.EmbeddedEtcd}
	}
	f.RedisAddrs = b.RedisAddrs
	switch {
	case b.Embedded != nil:
		f.Restarts = &crashedNodes{r: b.Embedded}
	case cfg.RedisRestart:
		proxied, err := proxyNodes(b.RedisAddrs)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() error { proxied.close(); return nil }) // after the shops
		f.Restarts = proxied
		shopBackends := *b
		shopBackends.RedisAddrs = proxied.proxyAddrs()
		b = &shopBackends
	}

	shops := cfg.Shops
	if shops <= 0 {
		shops = DefaultShops
	}
	if n := acfg.MaxInFlight(); n > 0 {
		f.DoorSlots = shops * n
	}
	if cfg.Processes {
		if err := startProcessShops(ctx, f, shops, acfg, cfg, b, &closers); err != nil {
			return nil, err
		}
		f.Backend += fmt.Sprintf("; %d shops as child processes", shops)
		return f, nil
	}
	serveCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var served sync.WaitGroup
	closers = append(closers, func() error { stop(); served.Wait(); return nil })
	for i := range shops {
		scfg := acfg
		if i == 0 {
			scfg.ClockAhead = cfg.ClockAhead
		}
		shop, err := app.NewShop(ctx, scfg, b)
		if err != nil {
			return nil, err
		}
		closers = append(closers, shop.Close)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("fleet: shop %d: %w", i+1, err)
		}
		f.Targets = append(f.Targets, "http://"+ln.Addr().String())
		served.Add(1)
		go func() {
			defer served.Done()
			if err := shop.Serve(serveCtx, ln); err != nil {
				log.Error("shop stopped", "shop", i+1, "err", err)
			}
		}()
	}
	return f, nil
}

// randomToken makes the embedded shops' admin token.
func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("fleet: admin token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// orDefault returns d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
