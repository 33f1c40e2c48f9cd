package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/metrics"
	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/zklock"
)

// Shop is one shop instance: its own Redis clients, one locker per lock
// mode, redis-decr's reservations, the order service and the HTTP router, on shared Backends. Several
// Shops on the same Backends behave like several processes: they share the
// database and the Redis servers and nothing else.
//
// Handler is safe for concurrent use. Serve runs at most once; Close must be
// called after Serve returned (or instead of it) and releases the clients.
type Shop struct {
	cfg      Config
	clients  []*redis.Client      // the --redis nodes, in order
	master   *failover            // nil without a Sentinel-managed master
	cluster  *redis.ClusterClient // nil without a Redis Cluster
	reg      *registration        // this shop's row in the table shops
	etcd     *clientv3.Client     // nil without etcd endpoints
	zk       *zklock.Locker       // nil without a ZooKeeper ensemble
	lockers  map[dlock.Mode]dlock.Locker
	orders   *order.Service
	handler  http.Handler
	inflight sync.WaitGroup // requests inside Serve's server

	closeOnce sync.Once
	closeErr  error
}

// NewShop builds a shop on b. It first registers the shop in the
// database, which refuses a shop whose lock servers differ from those of
// another live shop on the same database (see registry.go); its heartbeat
// runs until Close. Beyond that it dials nothing at once: the Redis
// clients connect on first use, so a node that is down at start shows up
// in /readyz and in 503s, not as a start-up failure. With b.RedisMaster it
// also asks the Sentinels where the master is, now and every second in the
// background, until Close (sentinel.go). With b.RedisCluster it opens a
// cluster client instead (cluster.go). ctx bounds the registration and a
// short reachability check whose result is only logged.
//
// Errors: a *LockServersError (wrapping ErrOtherLockServers) naming both
// shops' servers; the database's error if the registration could not be
// written or read; half a Sentinel master (ErrIncompleteSentinelMaster);
// a lock mode dlock.New cannot build (a bug, or no Redis address); a
// ZooKeeper ensemble that granted no session within ten seconds (its error
// names --zookeeper: this is the one backend dialled at once, since the
// session is the zookeeper lock's lease). On
// error nothing is left open. The caller must Close the shop.
func NewShop(ctx context.Context, cfg Config, b *Backends) (*Shop, error) {
	if b == nil || b.DB == nil {
		return nil, errors.New("app: NewShop: backends without a database")
	}
	if len(b.RedisAddrs) == 0 {
		return nil, errors.New("app: NewShop: backends without redis nodes")
	}
	if err := b.RedisMaster.Check(); err != nil {
		return nil, err
	}
	if err := checkClusterAddrs(b.RedisCluster, b.RedisMaster); err != nil {
		return nil, err
	}
	log := cfg.logger()
	reg, err := register(ctx, b.DB, lockServersOf(b), log)
	if err != nil {
		return nil, err
	}
	m := metrics.New()
	s := &Shop{cfg: cfg, reg: reg, clients: newRedisClients(b.RedisAddrs, redisDialer(b.Net)), lockers: map[dlock.Mode]dlock.Locker{}}
	// lua, naive, fenced, the dedupe locks, redis-decr and redis-queue
	// use one Redis: node 0, the Sentinel-managed master or the cluster.
	// Redlock asks every node.
	var single redis.UniversalClient = s.clients[0]
	switch {
	case !b.RedisMaster.IsZero():
		s.master = openFailover(b.RedisMaster, redisDialer(b.Net), m.RedisMasterChanged, log)
		single = s.master.client
	case len(b.RedisCluster) > 0:
		s.cluster = newClusterClient(b.RedisCluster, redisDialer(b.Net))
		single = s.cluster
	}
	for _, mode := range dlock.Modes() {
		var l dlock.Locker
		var err error
		if mode == dlock.ModeRedlock {
			l, err = dlock.New(mode, s.clients)
		} else {
			l, err = dlock.NewSingle(mode, single)
		}
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("app: %s locker: %w", mode, err)
		}
		s.lockers[mode] = l
	}
	if len(b.EtcdEndpoints) > 0 {
		endpoints, err := linkAddrs(b.Net, netsim.Etcd, b.EtcdEndpoints)
		if err != nil {
			s.Close()
			return nil, err
		}
		c, err := newEtcdClient(endpoints)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("app: etcd client: %w", err)
		}
		s.etcd = c
		s.lockers[etcdlock.Mode] = etcdlock.New(c)
	}
	if len(b.ZooKeeper) > 0 {
		zk, err := newZooKeeperLocker(ctx, b.ZooKeeper, b.Net)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.zk = zk
		s.lockers[zklock.Mode] = zk
	}
	for mode, l := range s.lockers {
		dlock.Observe(l, m.Locker(mode))
	}

	products := stock.NewStore(b.DB)
	s.orders = order.NewService(b.DB, products, s.lockers, order.Options{
		LockWait: cfg.LockWait, Logger: log, NaiveExpiry: cfg.NaiveExpiry, Now: clock(cfg.ClockAhead),
		RedisDecr: redisstock.New(single), // redis-decr's stock, on the Redis lua uses
		Queue:     redisqueue.New(single), // redis-queue's stock and streams, on the same Redis
		Observer:  m,
	})
	m.Audits(s.orders)
	m.Queues(s.orders)
	if sqlDB, err := b.DB.DB(); err == nil {
		m.Pool(sqlDB)
	}
	var master httpapi.RedisMaster // a nil *failover would not be a nil interface
	switch {
	case s.master != nil:
		master = s.master
	case s.cluster != nil:
		master = clusterReady{s.cluster}
	}
	var etcd httpapi.Readier
	if s.etcd != nil {
		etcd = etcdReady{s.etcd}
	}
	var zk httpapi.Readier // a nil *zklock.Locker would not be a nil interface
	if s.zk != nil {
		zk = s.zk
	}
	s.handler = httpapi.NewRouter(httpapi.Deps{
		Products:    products,
		Orders:      s.orders,
		Statuses:    s.orders,
		DB:          b.DB,
		Redis:       s.clients,
		RedisMaster: master,
		AdminToken:  cfg.AdminToken,
		BuyerSecret: cfg.BuyerSecret,
		Logger:      log,
		Door:        m,
		Metrics:     m.Handler(),
		Etcd:        etcd,
		ZooKeeper:   zk,

		MaxInFlightOrders: cfg.MaxInFlight(),
		OrderQueueWait:    cfg.lockWait(),
		BuyerRate:         cfg.BuyerRate,
		BuyerBurst:        cfg.BuyerBurst,
	})
	s.logReachability(ctx)
	return s, nil
}

// logReachability pings every node and the Sentinel-managed master once,
// briefly, and logs what does not answer.
func (s *Shop) logReachability(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, redisDialTimeout)
	defer cancel()
	up := 0
	for _, c := range s.clients {
		if c.Ping(ctx).Err() == nil {
			up++
		}
	}
	log := s.cfg.logger()
	if s.master != nil && s.master.Ping(ctx) != nil {
		log.Warn("redis: the Sentinel-managed master does not answer; see /readyz", "master", s.master.master.Name)
	}
	if s.cluster != nil && (clusterReady{s.cluster}).Ping(ctx) != nil {
		log.Warn("redis: not every master of the Redis Cluster answers; see /readyz")
	}
	if up < len(s.clients) {
		log.Warn("redis: not every node answers; see /readyz", "up", up, "nodes", len(s.clients))
		return
	}
	log.Debug("redis: every node answers", "nodes", len(s.clients))
}

// Handler returns the shop's HTTP handler (the router), for Serve or for an
// httptest.Server. It is safe for concurrent use until Close.
func (s *Shop) Handler() http.Handler { return s.handler }

// Close stops the order service's background settlements, closes the
// lockers (their background goroutines and subscriptions) and then the
// Redis clients and the Sentinel poll, and removes the shop's row from the registry (a failure
// there is only logged: the row goes stale). Call it after Serve returned:
// by then every order has finished and released its locks. It does not
// close the Backends. It is safe to call more than once; later calls
// return the first call's result.
func (s *Shop) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.orders != nil {
			errs = append(errs, s.orders.Close()) // its settlements use the clients
		}
		for mode, l := range s.lockers {
			if err := l.Close(); err != nil {
				errs = append(errs, fmt.Errorf("app: close %s locker: %w", mode, err))
			}
		}
		if s.master != nil {
			if err := s.master.close(); err != nil && !errors.Is(err, redis.ErrClosed) {
				errs = append(errs, fmt.Errorf("app: close failover client: %w", err))
			}
		}
		if s.cluster != nil {
			if err := s.cluster.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
				errs = append(errs, fmt.Errorf("app: close cluster client: %w", err))
			}
		}
		for _, c := range s.clients {
			if err := c.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
				errs = append(errs, fmt.Errorf("app: close redis client: %w", err))
			}
		}
		if s.etcd != nil {
			if err := s.etcd.Close(); err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("app: close etcd client: %w", err))
			}
		}
		if s.reg != nil {
			s.reg.close()
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// Server timeouts. WriteTimeout must outlast the slowest legitimate order:
// the wait for an order slot and for the lock, plus the longest simulated
// work and stall a product may ask for (package stock's limits).
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	idleTimeout       = 60 * time.Second
	writeSlack        = 10 * time.Second
	// drainTimeout bounds the wait for handlers still running after a
	// forced close (their contexts are cancelled, so they end quickly).
	drainTimeout = 5 * time.Second
)

func (s *Shop) writeTimeout() time.Duration {
	// Queue at the door, then wait for the lock, then work and stall.
	return 2*s.cfg.lockWait() + stock.MaxWork + stock.MaxStall + writeSlack
}

// clock is a shop's own clock, ahead of the machine's by ahead; nil (the
// machine's) for none.
func clock(ahead time.Duration) func() time.Time {
	if ahead == 0 {
		return nil
	}
	return func() time.Time { return time.Now().Add(ahead) }
}
