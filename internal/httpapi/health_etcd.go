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
	ctx, cancel := context.WithTimeout(ctx, etcdCheckTimeout)
	defer cancel()
	if err := a.etcd.Check(ctx); err != nil {
		return "etcd: no quorum read within " + etcdCheckTimeout.String()
	}
	return ""
}
