package app

// What a shop locks on, written the way the shop registry (registry.go)
// compares it, and the error that names both sides when two shops differ.

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
)

// ErrOtherLockServers is wrapped by NewShop's *LockServersError.
var ErrOtherLockServers = errors.New("app: another live shop on this database locks on other servers")

// LockServers are the servers a shop takes its locks on, each list written
// the way the registry compares it. Two shops may share a database when
// their LockServers are equal (==).
type LockServers struct {
	// Redis is the Redis nodes: node 0 first, since lua, naive, fenced,
	// dedupe and redis-decr use it alone, then the others sorted (Redlock
	// asks them all). With a RedisMaster or a RedisCluster node 0 serves
	// redlock only, and all are sorted.
	Redis string
	// RedisMaster is what serves lua, naive, fenced, dedupe, redis-decr
	// and redis-queue instead of node 0: a Sentinel-managed master, "name
	// via sentinel,sentinel,...", the Sentinels sorted, or a Redis
	// Cluster, "cluster node,node,...", the nodes named sorted (two shops
	// must name the same nodes, though any node would find the same
	// cluster: the registry compares names, not clusters); empty without
	// one.
	RedisMaster string
	// Etcd is the etcd members' host:port, sorted.
	Etcd string
	// ZooKeeper is the ensemble's members' host:port, sorted; empty
	// without one.
	ZooKeeper string
}

// clusterPrefix starts LockServers.RedisMaster for a Redis Cluster.
const clusterPrefix = "cluster "

// String returns "redis a,b,...; etcd x,y,...", with "; redis master
// name via s,s,..." or "; redis cluster c,c,..." after the nodes when
// there is one, and "; zookeeper z,z,..." at the end with an ensemble.
func (s LockServers) String() string {
	master := ""
	switch {
	case strings.HasPrefix(s.RedisMaster, clusterPrefix):
		master = "; redis " + s.RedisMaster
	case s.RedisMaster != "":
		master = "; redis master " + s.RedisMaster
	}
	zk := ""
	if s.ZooKeeper != "" {
		zk = "; zookeeper " + s.ZooKeeper
	}
	return fmt.Sprintf("redis %s%s; etcd %s%s", orNone(s.Redis), master, orNone(s.Etcd), zk)
}

// LockServersError is NewShop's error when another live shop on the same
// database locks on other servers: it names both shops' servers, and its
// message says which flags to give. It wraps ErrOtherLockServers.
type LockServersError struct {
	Ours   LockServers // this shop's servers
	Other  string      // the other shop's id: host/pid/random
	Theirs LockServers // the other shop's servers
}

// Error names both shops' servers and the flags that differ.
func (e *LockServersError) Error() string {
	var flags []string
	if e.Ours.Redis != e.Theirs.Redis {
		flags = append(flags, "--redis")
	}
	if e.Ours.RedisMaster != e.Theirs.RedisMaster {
		sentinel, cluster := false, false
		for _, m := range []string{e.Ours.RedisMaster, e.Theirs.RedisMaster} {
			cluster = cluster || strings.HasPrefix(m, clusterPrefix)
			sentinel = sentinel || m != "" && !strings.HasPrefix(m, clusterPrefix)
		}
		if sentinel {
			flags = append(flags, "--redis-sentinel/--redis-master")
		}
		if cluster {
			flags = append(flags, "--redis-cluster")
		}
	}
	if e.Ours.Etcd != e.Theirs.Etcd {
		flags = append(flags, "--etcd")
	}
	if e.Ours.ZooKeeper != e.Theirs.ZooKeeper {
		flags = append(flags, "--zookeeper")
	}
	if n := len(flags); n > 1 {
		flags = []string{strings.Join(flags[:n-1], ", "), flags[n-1]}
	}
	return fmt.Sprintf("%v, so their locks would not exclude each other's orders:\n"+
		"  this shop:  %v\n  shop %s: %v\n"+
		"Give every shop on one database the same %s (a shop without them starts embedded servers of its own). "+
		"A shop that crashed stops counting %v after its last heartbeat.",
		ErrOtherLockServers, e.Ours, e.Other, e.Theirs, strings.Join(flags, " and "), staleAfter)
}

// Unwrap returns ErrOtherLockServers.
func (e *LockServersError) Unwrap() error { return ErrOtherLockServers }

// lockServersOf returns the servers shops on b lock on. Addresses are
// lower-cased, etcd endpoints lose their scheme, and a loopback address
// gets "@" and this machine's name. A Sentinel master's name is kept as
// given: Sentinel's names are case-sensitive.
func lockServersOf(b *Backends) LockServers {
	host, _ := os.Hostname()
	norm := func(addr string) string {
		if u, err := url.Parse(addr); err == nil && u.Host != "" {
			addr = u.Host // http://127.0.0.1:2379 -> 127.0.0.1:2379
		}
		addr = strings.ToLower(addr)
		h, _, _ := net.SplitHostPort(addr)
		if ip := net.ParseIP(h); h == "localhost" || ip != nil && ip.IsLoopback() {
			addr += "@" + host
		}
		return addr
	}
	redis, etcd := make([]string, len(b.RedisAddrs)), make([]string, len(b.EtcdEndpoints))
	for i, a := range b.RedisAddrs {
		redis[i] = norm(a)
	}
	for i, e := range b.EtcdEndpoints {
		etcd[i] = norm(e)
	}
	switch {
	case !b.RedisMaster.IsZero() || len(b.RedisCluster) > 0:
		slices.Sort(redis)
	case len(redis) > 1:
		slices.Sort(redis[1:])
	}
	zk := make([]string, len(b.ZooKeeper))
	for i, a := range b.ZooKeeper {
		zk[i] = norm(a)
	}
	slices.Sort(etcd)
	slices.Sort(zk)
	servers := LockServers{Redis: strings.Join(redis, ","), Etcd: strings.Join(etcd, ","), ZooKeeper: strings.Join(zk, ",")}
	if !b.RedisMaster.IsZero() {
		sentinels := make([]string, len(b.RedisMaster.Sentinels))
		for i, a := range b.RedisMaster.Sentinels {
			sentinels[i] = norm(a)
		}
		slices.Sort(sentinels)
		servers.RedisMaster = b.RedisMaster.Name + " via " + strings.Join(sentinels, ",")
	}
	if len(b.RedisCluster) > 0 {
		nodes := make([]string, len(b.RedisCluster))
		for i, a := range b.RedisCluster {
			nodes[i] = norm(a)
		}
		slices.Sort(nodes)
		servers.RedisMaster = clusterPrefix + strings.Join(nodes, ",")
	}
	return servers
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
