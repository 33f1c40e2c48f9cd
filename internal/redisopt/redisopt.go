// Package redisopt builds the options of every go-redis client the shop,
// the load generator and the tests open, so that they fail the same way:
//
//   - DialerRetries 1: go-redis's default, 5 attempts 100 ms apart, turns
//     a refused connection (which fails at once) into half a second.
//   - MaxRetries -1, and MaxRedirects -1 for a cluster: never resend a
//     command. If a lock's SET NX reached Redis but its reply was lost, a
//     blind resend finds its own key and reports "not obtained"; the caller
//     decides what to do instead. go-redis's cluster client resends on a
//     network error too, not only on MOVED; a MOVED reply is then an error
//     for that one call, and makes the client reload the slots for the next.
//   - DisableIdentity: no CLIENT SETINFO round trip on every new connection.
//   - MaintNotificationsConfig disabled: go-redis would otherwise send
//     CLIENT MAINT_NOTIFICATIONS (a Redis Cloud feature) on every new
//     connection; Redis 7 and miniredis refuse it, and a burst of new
//     connections then stalls lock calls. (A failover client keeps them off
//     by itself.)
//
// What differs from client to client (pool, timeouts, the dialer through
// which package netsim delays a link) is in Settings.
package redisopt

import (
	"context"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Settings are what a caller chooses; a zero field leaves go-redis's
// default.
type Settings struct {
	// Dialer dials every connection (netsim.Network.Dialer); nil is
	// go-redis's own.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// PoolSize, PoolTimeout and MinIdleConns size the pool per node.
	PoolSize     int
	PoolTimeout  time.Duration
	MinIdleConns int
	// DialTimeout, ReadTimeout and WriteTimeout bound each dial, read and
	// write.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// ContextTimeout: the caller's deadline also bounds each command.
	ContextTimeout bool
}

// Client returns the options of a client of the one server at addr.
func Client(addr string, s Settings) *redis.Options {
	return universal([]string{addr}, s).Simple()
}

// Cluster returns the options of a Redis Cluster client that starts from
// the nodes addrs and gives every node s; reload is how often, at most, it
// asks where the slots are (0: go-redis's default).
func Cluster(addrs []string, reload time.Duration, s Settings) *redis.ClusterOptions {
	o := universal(addrs, s).Cluster()
	o.ClusterStateReloadInterval = reload
	return o
}

// Failover returns the options of a client of the master that the
// Sentinels at sentinels name master; go-redis gives s to its connections
// to the Sentinels too (and keeps maintenance notifications off itself).
func Failover(master string, sentinels []string, s Settings) *redis.FailoverOptions {
	o := universal(sentinels, s)
	o.MasterName = master
	return o.Failover()
}

// universal is every client's options in go-redis's one form, from which
// it derives the options of each kind of client.
func universal(addrs []string, s Settings) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs:                    addrs,
		Dialer:                   s.Dialer,
		PoolSize:                 s.PoolSize,
		PoolTimeout:              s.PoolTimeout,
		MinIdleConns:             s.MinIdleConns,
		DialTimeout:              s.DialTimeout,
		DialerRetries:            1,
		ReadTimeout:              s.ReadTimeout,
		WriteTimeout:             s.WriteTimeout,
		MaxRetries:               -1,
		MaxRedirects:             -1,
		ContextTimeoutEnabled:    s.ContextTimeout,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}
