package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
// the lease of every zookeeper lock the shop holds (zklock.New). Its
// error names --zookeeper: a session the ensemble did not grant within
// zkConnectTimeout, or members that are not host:port.
func newZooKeeperLocker(ctx context.Context, servers []string) (*zklock.Locker, error) {
	ctx, cancel := context.WithTimeout(ctx, zkConnectTimeout)
	defer cancel()
	l, err := zklock.New(ctx, servers, zklock.Options{})
	if err != nil {
		return nil, fmt.Errorf("--zookeeper %s: %w", strings.Join(servers, ","), err)
	}
	return l, nil
}
