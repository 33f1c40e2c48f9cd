package app

import (
	"context"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/redisopt"
)

// Redis client settings of one shop instance, per node, and for the
// failover client that stands in for node 0 with --redis-sentinel (what
// every client here shares, package redisopt says):
//
//   - PoolSize: go-redis defaults to 10 connections per CPU, 20 on a 2-core
//     box. Every in-flight order needs a connection for its dedupe lock and
//     its product lock, and the watchdog renews on its own; with 64+ buyers
//     in flight a pool of 20 makes them queue for connections instead of for
//     the lock. 128 per node leaves headroom; connections are opened only
//     when needed.
//   - DialTimeout, ReadTimeout, WriteTimeout: a lock call on a dead or hung
//     node must fail in well under a second, so that redlock can count that
//     node out and lua can answer 503 while the buyer still waits.
//   - ContextTimeout: the caller's deadline (the lock wait, the request)
//     also bounds each command.
const (
	redisPoolSize     = 128
	redisDialTimeout  = 500 * time.Millisecond
	redisReadTimeout  = 500 * time.Millisecond
	redisWriteTimeout = 500 * time.Millisecond
	redisPoolTimeout  = time.Second
	redisMinIdleConns = 8
)

// dialer dials a shop's connections to Redis: through the simulated
// network's Redis link (netsim.Network.Dialer), or go-redis's own dialer
// when nil.
type dialer = func(ctx context.Context, network, addr string) (net.Conn, error)

// redisSettings are the settings above, dialled through dial.
func redisSettings(dial dialer) redisopt.Settings {
	return redisopt.Settings{
		Dialer:         dial,
		PoolSize:       redisPoolSize,
		PoolTimeout:    redisPoolTimeout,
		MinIdleConns:   redisMinIdleConns,
		DialTimeout:    redisDialTimeout,
		ReadTimeout:    redisReadTimeout,
		WriteTimeout:   redisWriteTimeout,
		ContextTimeout: true,
	}
}

// newRedisClients dials nothing yet: go-redis connects on first use,
// through dial. The caller closes the clients.
func newRedisClients(addrs []string, dial dialer) []*redis.Client {
	clients := make([]*redis.Client, len(addrs))
	for i, addr := range addrs {
		clients[i] = redis.NewClient(redisopt.Client(addr, redisSettings(dial)))
	}
	return clients
}

// newFailoverClient returns go-redis's failover client for m, with the
// settings above: it stands in for node 0, so it must fail as fast and
// never resend a lock command either. It dials nothing yet; then the
// Sentinels and the master they name, through dial. The caller closes it.
func newFailoverClient(m SentinelMaster, dial dialer) *redis.Client {
	return redis.NewFailoverClient(redisopt.Failover(m.Name, m.Sentinels, redisSettings(dial)))
}

// newSentinelClient returns a client that asks one Sentinel where the
// master is, for /readyz and the poll: the same timeouts, a few
// connections, none kept idle, dialled through dial. The caller closes it.
func newSentinelClient(addr string, dial dialer) *redis.SentinelClient {
	s := redisSettings(dial)
	s.PoolSize, s.MinIdleConns = 4, 0
	return redis.NewSentinelClient(redisopt.Client(addr, s))
}
