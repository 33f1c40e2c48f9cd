package httpapi

import (
	"context"
	"time"
)

// etcdCheckTimeout bounds /readyz's question to the etcd cluster: a quorum
// read answers in milliseconds; a cluster without a quorum never does.
const etcdCheckTimeout = 500 * time.Millisecond

// Etcd is the etcd cluster strategy etcd locks on, as /readyz sees it.
// Check must be safe for concurrent use and return an error that names no
// secret (it goes into the 503) when the cluster cannot answer a read
// that needs its quorum.
type Etcd interface {
	Check(ctx context.Context) error
}

// checkEtcd asks the cluster, within etcdCheckTimeout, and returns why it
// is not ready, or "" if it is (or if the shop has no etcd).
func (a *api) checkEtcd(ctx context.Context) string {
	if a.etcd == nil {
		return ""
	}
	return askWithin(ctx, etcdCheckTimeout, a.etcd.Check, "etcd: no quorum read")
}

// askWithin calls ask with a ctx bounded by d, and returns "" if it
// answered, else unready and d: the words /readyz gives for a lock
// server (etcd, ZooKeeper) that did not answer in time.
func askWithin(ctx context.Context, d time.Duration, ask func(context.Context) error, unready string) string {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := ask(ctx); err != nil {
		return unready + " within " + d.String()
	}
	return ""
}
