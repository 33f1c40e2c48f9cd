package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/internal/zklock"
)

// ErrInvalidZooKeeper is wrapped by errors about a malformed --zookeeper
// member.
var ErrInvalidZooKeeper = errors.New("app: invalid zookeeper server")

// CheckZooKeeper reports whether every member of servers is host:port,
// returning an error wrapping ErrInvalidZooKeeper, naming --zookeeper, if
// not. An empty list is valid: no ensemble.
func CheckZooKeeper(servers []string) error {
	for _, s := range servers {
		if CheckRedisAddr(s) != nil {
			return fmt.Errorf("--zookeeper: %w %q: want host:port", ErrInvalidZooKeeper, s)
		}
	}
	return nil
}

// zkConnectTimeout bounds how long a new shop waits for its ZooKeeper
// session: an ensemble with a quorum grants one in milliseconds.
const zkConnectTimeout = 10 * time.Second

// newZooKeeperLocker opens this shop's session on the ensemble at servers,
// the lease of every zookeeper lock the shop holds (zklock.New), through
// n's ZooKeeper link. Its error names --zookeeper and the servers as
// given: a session the ensemble did not grant within zkConnectTimeout,
// members that are not host:port, or a link that could not start.
func newZooKeeperLocker(ctx context.Context, servers []string, n *netsim.Network) (*zklock.Locker, error) {
	ctx, cancel := context.WithTimeout(ctx, zkConnectTimeout)
	defer cancel()
	named := func(err error) error { return fmt.Errorf("--zookeeper %s: %w", strings.Join(servers, ","), err) }
	dial, err := linkAddrs(n, netsim.ZooKeeper, servers)
	if err != nil {
		return nil, named(err)
	}
	l, err := zklock.New(ctx, dial, zklock.Options{})
	if err != nil {
		return nil, named(err)
	}
	return l, nil
}
