package app

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdReady is the shop's etcd cluster as /readyz asks it
// (httpapi.Readier): a linearizable read of one key, which only a quorum can
// answer. Safe for concurrent use.
type etcdReady struct{ c *clientv3.Client }

// etcdReadyKey is read, never written: its count is the question.
const etcdReadyKey = "flashsale/readyz"

// Ready implements httpapi.Readier.
func (e etcdReady) Ready(ctx context.Context) error {
	_, err := e.c.Get(ctx, etcdReadyKey, clientv3.WithCountOnly())
	return err
}
