package app

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdReady is the shop's etcd cluster as /readyz asks it
// (httpapi.Etcd): a linearizable read of one key, which only a quorum can
// answer. Safe for concurrent use.
type etcdReady struct{ c *clientv3.Client }

// etcdReadyKey is read, never written: its count is the question.
const etcdReadyKey = "flashsale/readyz"

// Check implements httpapi.Etcd.
func (e etcdReady) Check(ctx context.Context) error {
	_, err := e.c.Get(ctx, etcdReadyKey, clientv3.WithCountOnly())
	return err
}
