package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/locktable"
	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/internal/redisopt"
	"github.com/flashsale/flashsale/internal/zklock"
)

// openWithin bounds connecting to each backend and checking it answers.
const openWithin = 10 * time.Second

// backends are the clients the run opened, for the lockers and for the
// servers' settings.
type backends struct {
	net   *netsim.Network // nil without --rtt: the clients dial the servers
	redis []*redis.Client
	etcd  *clientv3.Client
	zk    *zklock.Locker
	row   *rowLock
	close []func()
}

// Close closes everything open, the lockers before their clients.
func (b *backends) Close() {
	for i := len(b.close) - 1; i >= 0; i-- {
		b.close[i]()
	}
}

// openSystems connects to every backend cfg names and returns one System
// per row of the table, in its order, those not named skipped. An error
// names the flag of the backend that did not answer; nothing stays open
// then.
func openSystems(ctx context.Context, cfg config) ([]locktable.System, *backends, error) {
	ctx, cancel := context.WithTimeout(ctx, openWithin)
	defer cancel()
	b := &backends{}
	if !cfg.rtt.IsZero() {
		n := netsim.New(cfg.rtt)
		b.net = n
		b.close = append(b.close, n.Close) // closed last, after every client
	}
	systems, err := b.open(ctx, cfg)
	if err != nil {
		b.Close()
		return nil, nil, err
	}
	return systems, b, nil
}

func (b *backends) open(ctx context.Context, cfg config) ([]locktable.System, error) {
	key := func(l dlock.Locker) locktable.Acquire { return acquireOn(l, cfg.prefix, cfg.ttl, cfg.wait) }
	systems := []locktable.System{
		{Kind: locktable.SingleRedis, Name: "single Redis (lua)", Skip: "give --redis"},
		{Kind: locktable.Redlock, Name: "Redlock, 5 nodes (redlock)", Skip: "give five --redis nodes"},
		{Kind: locktable.Etcd, Name: "etcd", Skip: "give --etcd"},
		{Kind: locktable.ZooKeeper, Name: "ZooKeeper", Skip: "give --zookeeper"},
		{Kind: locktable.RowLock, Name: "row lock (SELECT … FOR UPDATE)", Skip: "give --mysql-dsn"},
	}
	if len(cfg.redis) > 0 {
		if err := b.openRedis(ctx, cfg.redis, cfg.pool()); err != nil {
			return nil, err
		}
		lua := dlock.NewLua(b.redis[0])
		b.close = append(b.close, func() { lua.Close() })
		systems[0].Acquire = key(lua)
		if len(b.redis) == 5 {
			rl := dlock.NewRedlock(b.redis)
			b.close = append(b.close, func() { rl.Close() })
			systems[1].Acquire = key(rl)
		}
	}
	if len(cfg.etcd) > 0 {
		if err := b.openEtcd(ctx, cfg.etcd); err != nil {
			return nil, err
		}
		systems[2].Name = fmt.Sprintf("etcd, %d members", len(cfg.etcd))
		systems[2].Acquire = key(etcdlock.New(b.etcd))
	}
	if len(cfg.zookeeper) > 0 {
		servers, err := b.net.Addrs(netsim.ZooKeeper, cfg.zookeeper)
		if err != nil {
			return nil, fmt.Errorf("--zookeeper %s: %w", strings.Join(cfg.zookeeper, ","), err)
		}
		zk, err := zklock.New(ctx, servers, zklock.Options{Root: cfg.zkRoot})
		if err != nil {
			return nil, fmt.Errorf("--zookeeper %s: %w", strings.Join(cfg.zookeeper, ","), err)
		}
		b.zk = zk
		b.close = append(b.close, func() { zk.Close() })
		systems[3].Name = fmt.Sprintf("ZooKeeper, %d members", len(cfg.zookeeper))
		systems[3].Acquire = key(zk)
	}
	if cfg.mysqlDSN != "" {
		row, err := openRowLock(ctx, cfg.mysqlDSN, b.net, cfg.table, cfg.keys(), cfg.pool(), cfg.wait)
		if err != nil {
			return nil, fmt.Errorf("--mysql-dsn: %w", err)
		}
		b.row = row
		b.close = append(b.close, row.Close)
		systems[4].Name = fmt.Sprintf("row lock, %s (SELECT … FOR UPDATE)", row.server)
		systems[4].Acquire = row.Acquire
	}
	return systems, nil
}

// acquireOn adapts a dlock.Locker to the table: key n is prefix+n, taken
// for ttl, waiting at most wait; its handle's Release lets it go.
func acquireOn(l dlock.Locker, prefix string, ttl, wait time.Duration) locktable.Acquire {
	return func(ctx context.Context, key int) (func(context.Context) error, error) {
		h, err := l.Lock(ctx, prefix+strconv.Itoa(key), ttl, wait)
		if err != nil {
			return nil, err
		}
		return h.Release, nil
	}
}

// keys is how many keys a run uses: the hot one, 0, and one per worker.
func (c config) keys() int { return c.workers + 1 }

// pool is the connections a client may open to one server: one per worker
// of the largest case, so that workers wait for the lock, not for a
// connection, and a few for the lockers' own (pub/sub, renewals).
func (c config) pool() int { return slices.Max(append([]int{c.workers}, c.contenders...)) + 8 }

// openRedis makes a client per node, with the shop's settings (no resent
// lock commands, the caller's deadline on every command), dialing through
// the network if there is one, and checks that each answers.
func (b *backends) openRedis(ctx context.Context, addrs []string, pool int) error {
	var dial func(ctx context.Context, network, addr string) (net.Conn, error)
	if b.net != nil {
		dial = b.net.Dialer(netsim.Redis)
	}
	for _, a := range addrs {
		c := redis.NewClient(redisopt.Client(a, redisopt.Settings{
			Dialer: dial, PoolSize: pool, DialTimeout: time.Second, ContextTimeout: true,
		}))
		b.redis = append(b.redis, c)
		b.close = append(b.close, func() { c.Close() })
		if err := c.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("--redis %s: %w", a, err)
		}
	}
	return nil
}

// openEtcd makes a client on the members, through the network if there
// is one, and checks that the cluster answers a read.
func (b *backends) openEtcd(ctx context.Context, endpoints []string) error {
	dial, err := b.net.Addrs(netsim.Etcd, endpoints)
	if err != nil {
		return fmt.Errorf("--etcd %s: %w", strings.Join(endpoints, ","), err)
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   dial,
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("--etcd %s: %w", strings.Join(endpoints, ","), err)
	}
	b.etcd = c
	b.close = append(b.close, func() { c.Close() })
	if _, err := c.Get(ctx, "locktable:health"); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %v: %w", openWithin, err)
		}
		return fmt.Errorf("--etcd %s: %w", strings.Join(endpoints, ","), err)
	}
	return nil
}
