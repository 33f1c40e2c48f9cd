package app

import (
	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/netsim"
)

// A shop's links to its backends go through the simulated network
// (Config.RTT, package netsim), when it has one: the database, every Redis
// client the shop opens (through a dialer, so that the nodes a cluster or
// a Sentinel names are delayed too), the etcd members and the ZooKeeper
// servers. The addresses the Backends record stay the real ones: the
// registry compares them, the load generator's harness dials them.

// MySQLLink returns the option that makes database.OpenMySQL dial the
// server through n's DB link; with a nil n it dials the server.
func MySQLLink(n *netsim.Network) database.Option {
	return database.WithAddr(func(addr string) (string, error) { return n.Addr(netsim.DB, addr) })
}

// SQLiteLink returns the option that makes database.OpenSQLite wait n's DB
// link's RTT once per round trip a MySQL client would make (SQLite has no
// network); with a nil n it waits none.
func SQLiteLink(n *netsim.Network) database.Option {
	return database.WithConnector(n.Connector)
}

// redisDialer is how a shop's Redis clients dial: through n's Redis link,
// or go-redis's own dialer when there is no network.
func redisDialer(n *netsim.Network) dialer {
	if n == nil {
		return nil
	}
	return n.Dialer(netsim.Redis)
}

// linkAddrs returns the addresses a shop dials for servers on link l
// (netsim.Network.Addrs: a host:port, or an etcd endpoint's URL, each
// through its proxy). Errors are netsim's.
func linkAddrs(n *netsim.Network, l netsim.Link, servers []string) ([]string, error) {
	return n.Addrs(l, servers)
}
