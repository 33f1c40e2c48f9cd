package httpapi

import (
	"context"
	"time"
)

// lockServerCheckTimeout bounds /readyz's question to a lock server: etcd
// or ZooKeeper with its quorum answers a read in milliseconds; without
// one it answers none.
const lockServerCheckTimeout = 500 * time.Millisecond

// Readier is a lock server (the etcd cluster strategy etcd locks on, the
// ZooKeeper ensemble of strategy zookeeper) as /readyz sees it. Ready must
// be safe for concurrent use and return an error, naming no secret, when
// the server cannot answer a read that needs its quorum within ctx.
type Readier interface {
	Ready(ctx context.Context) error
}

// checkEtcd asks the etcd cluster and returns why it is not ready, or ""
// if it is (or if the shop has no etcd).
func (a *api) checkEtcd(ctx context.Context) string {
	return askWithin(ctx, a.etcd, "etcd: no quorum read")
}

// checkZooKeeper asks the ensemble and returns why it is not ready, or ""
// if it is (or if the shop has no ensemble).
func (a *api) checkZooKeeper(ctx context.Context) string {
	return askWithin(ctx, a.zk, "zookeeper: no read answered")
}

// askWithin asks s, within lockServerCheckTimeout, and returns "" if it
// answered (or s is nil), else unready and the timeout: the words /readyz
// gives for a lock server that did not answer in time.
func askWithin(ctx context.Context, s Readier, unready string) string {
	if s == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, lockServerCheckTimeout)
	defer cancel()
	if err := s.Ready(ctx); err != nil {
		return unready + " within " + lockServerCheckTimeout.String()
	}
	return ""
}
