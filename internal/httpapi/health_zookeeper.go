package httpapi

import (
	"context"
	"time"
)

// zkCheckTimeout bounds /readyz's question to the ZooKeeper ensemble: a
// member with its quorum answers a read in milliseconds; one without
// answers none.
const zkCheckTimeout = 500 * time.Millisecond

// ZooKeeper is the ensemble strategy zookeeper locks on, as /readyz sees
// it (zklock.Locker). Ready must be safe for concurrent use and return an
// error when no member with a quorum answers a read within ctx.
type ZooKeeper interface {
	Ready(ctx context.Context) error
}

// checkZooKeeper asks the ensemble, within zkCheckTimeout, and returns why
// it is not ready, or "" if it is (or if the shop has no ensemble).
func (a *api) checkZooKeeper(ctx context.Context) string {
	if a.zk == nil {
		return ""
	}
	return askWithin(ctx, zkCheckTimeout, a.zk.Ready, "zookeeper: no read answered")
}
