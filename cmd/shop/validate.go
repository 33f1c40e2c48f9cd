package main

import (
	"net"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/buyertoken"
	"github.com/flashsale/flashsale/internal/database"
)

// validate checks values the flag package cannot.
func (o *options) validate() error {
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return usagef("--addr %q: want host:port or :port", o.addr)
	}
	if o.mysqlDSN != "" {
		if _, err := database.MySQLConfig(o.mysqlDSN); err != nil {
			return usagef("--mysql-dsn: %v", err)
		}
	}
	for _, a := range o.redisAddrs() {
		if err := app.CheckRedisAddr(a); err != nil {
			return usagef("--redis: %v", err)
		}
	}
	if o.redis != "" && len(o.redisAddrs()) == 0 {
		return usagef("--redis %q: no address in it", o.redis)
	}
	if err := o.validateSentinel(); err != nil {
		return err
	}
	if err := o.validateCluster(); err != nil {
		return err
	}
	if o.buyerSecret != "" && len(o.buyerSecret) < buyertoken.MinSecretLen {
		return usagef("--buyer-secret: %d bytes; want at least %d (a short key can be guessed from one token)", len(o.buyerSecret), buyertoken.MinSecretLen)
	}
	if o.buyerRate < 0 || o.buyerBurst < 1 {
		return usagef("--buyer-rate %v, --buyer-burst %d: want a rate of 0 (off) or more, and a burst of 1 or more", o.buyerRate, o.buyerBurst)
	}
	for _, e := range splitList(o.etcd) {
		if err := app.CheckEtcdEndpoint(e); err != nil {
			return usagef("--etcd: %v", err)
		}
	}
	if o.etcd != "" && len(splitList(o.etcd)) == 0 {
		return usagef("--etcd %q: no endpoint in it", o.etcd)
	}
	if err := app.CheckZooKeeper(splitList(o.zookeeper)); err != nil {
		return usagef("%v", err)
	}
	if o.zookeeper != "" && len(splitList(o.zookeeper)) == 0 {
		return usagef("--zookeeper %q: no member in it", o.zookeeper)
	}
	if o.lockWait <= 0 || o.lockWait > time.Minute {
		return usagef("--lock-wait %v: want more than 0 and at most 1m", o.lockWait)
	}
	if o.shutdownTimeout <= 0 {
		return usagef("--shutdown-timeout %v: want more than 0", o.shutdownTimeout)
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return usagef("--log-format %q: want text or json", o.logFormat)
	}
	if _, _, err := net.SplitHostPort(o.pprof); o.pprof != "" && err != nil {
		return usagef("--pprof %q: want host:port, e.g. 127.0.0.1:6060", o.pprof)
	}
	if _, err := parseLevel(o.logLevel); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	return nil
}

// validateSentinel checks --redis-sentinel and --redis-master: both or
// neither, each Sentinel host:port, the name one word.
func (o *options) validateSentinel() error {
	sentinels := splitList(o.redisSentinel)
	for _, a := range sentinels {
		if err := app.CheckRedisAddr(a); err != nil {
			return usagef("--redis-sentinel: %v", err)
		}
	}
	switch {
	case o.redisSentinel != "" && len(sentinels) == 0:
		return usagef("--redis-sentinel %q: no address in it", o.redisSentinel)
	case len(sentinels) > 0 && o.redisMaster == "":
		return usagef("--redis-sentinel is given but --redis-master is missing: name the master the Sentinels monitor")
	case o.redisMaster != "" && len(sentinels) == 0:
		return usagef("--redis-master %q is given but --redis-sentinel is missing: name the Sentinels, host:port,...", o.redisMaster)
	case strings.ContainsAny(o.redisMaster, " \t\r\n"):
		return usagef("--redis-master %q: a master's name has no spaces", o.redisMaster)
	}
	return nil
}

// validateCluster checks --redis-cluster: host:port each, at least one,
// and not beside --redis-sentinel.
func (o *options) validateCluster() error {
	nodes := splitList(o.redisCluster)
	for _, a := range nodes {
		if err := app.CheckRedisAddr(a); err != nil {
			return usagef("--redis-cluster: %v", err)
		}
	}
	switch {
	case o.redisCluster != "" && len(nodes) == 0:
		return usagef("--redis-cluster %q: no address in it", o.redisCluster)
	case len(nodes) > 0 && o.redisSentinel != "":
		return usagef("--redis-cluster and --redis-sentinel both name the Redis for lua, naive, fenced, dedupe and redis-decr: give one")
	}
	return nil
}
