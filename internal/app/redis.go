package app

import (
	"context"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Redis client settings of one shop instance, per node, and for the
// failover client that stands in for node 0 with --redis-sentinel.
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
//   - DialerRetries 1: the default, 5 attempts 100 ms apart, turns a
//     refused connection (fails in microseconds) into half a second.
//   - MaxRetries -1: never resend a lock command on its own. If a SET NX
//     reached Redis but its reply was lost, a blind retry finds our own key
//     and reports "not obtained"; the lock code decides what to do instead.
//   - ContextTimeoutEnabled: the caller's deadline (the lock wait, the
//     request) also bounds each command.
//   - MaintNotificationsConfig disabled: go-redis would otherwise send
//     CLIENT MAINT_NOTIFICATIONS (a Redis Cloud feature) on every new
//     connection; Redis 7 and miniredis refuse it, and under a burst of new
//     connections that probe stalled lock calls by hundreds of milliseconds.
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

// newRedisClients dials nothing yet: go-redis connects on first use,
// through dial. The caller closes the clients.
func newRedisClients(addrs []string, dial dialer) []*redis.Client {
	clients := make([]*redis.Client, len(addrs))
	for i, addr := range addrs {
		clients[i] = redis.NewClient(&redis.Options{
			Addr:                  addr,
			Dialer:                dial,
			PoolSize:              redisPoolSize,
			PoolTimeout:           redisPoolTimeout,
			MinIdleConns:          redisMinIdleConns,
			DialTimeout:           redisDialTimeout,
			DialerRetries:         1,
			ReadTimeout:           redisReadTimeout,
			WriteTimeout:          redisWriteTimeout,
			MaxRetries:            -1,
			ContextTimeoutEnabled: true,
			DisableIdentity:       true, // skip CLIENT SETINFO on every new connection
			MaintNotificationsConfig: &maintnotifications.Config{
				Mode: maintnotifications.ModeDisabled,
			},
		})
	}
	return clients
}

// newFailoverClient returns go-redis's failover client for m, with the
// settings above: it stands in for node 0, so it must fail as fast and
// never resend a lock command either. go-redis gives the same settings to
// the connections it opens to the Sentinels, and keeps maintenance
// notifications off for failover clients by itself. It dials nothing yet;
// then the Sentinels and the master they name, through dial. The caller
// closes it.
func newFailoverClient(m SentinelMaster, dial dialer) *redis.Client {
	return redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:            m.Name,
		SentinelAddrs:         m.Sentinels,
		Dialer:                dial,
		PoolSize:              redisPoolSize,
		PoolTimeout:           redisPoolTimeout,
		MinIdleConns:          redisMinIdleConns,
		DialTimeout:           redisDialTimeout,
		DialerRetries:         1,
		ReadTimeout:           redisReadTimeout,
		WriteTimeout:          redisWriteTimeout,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
	})
}

// newSentinelClient returns a client that asks one Sentinel where the
// master is, for /readyz and the poll: the same timeouts, a few
// connections, none kept idle, dialled through dial. The caller closes it.
func newSentinelClient(addr string, dial dialer) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{
		Addr:                  addr,
		Dialer:                dial,
		PoolSize:              4,
		PoolTimeout:           redisPoolTimeout,
		DialTimeout:           redisDialTimeout,
		DialerRetries:         1,
		ReadTimeout:           redisReadTimeout,
		WriteTimeout:          redisWriteTimeout,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	})
}
