package etcdlock

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/dlock"
)

// A grant's fence is its queue key's creation revision, which a cluster
// rebuilt empty counts from 1 again; so each grant also carries the
// cluster's epoch, the unix milliseconds of its first lock, created if
// absent and read in the transaction that queues the key (so both come from
// one cluster). The epoch trusts the wall clock to move forward; restore a
// snapshot with --bump-revision (docs/fenced-etcd.md).

// etcdEpochKey holds a cluster's epoch. It has no "/", so it is never a
// queue key ("<key>/<lease>") nor inside a queue's "<key>/" range; lock
// keys themselves are never stored.
const etcdEpochKey = "dlock:epoch"

// errBadEpoch means the epoch key holds something other than a positive
// number, written by something else: no grant can carry an epoch until fixed.
var errBadEpoch = errors.New("etcdlock: the epoch key does not hold an epoch")

// epochOps returns the operations that, inside the transaction that queues
// a key, create the epoch key with now unless it exists, then read it.
// readEpoch reads the answer of the last one.
func epochOps(now time.Time) []clientv3.Op {
	ifAbsent := clientv3.Compare(clientv3.CreateRevision(etcdEpochKey), "=", 0)
	create := clientv3.OpPut(etcdEpochKey, strconv.FormatInt(now.UnixMilli(), 10))
	return []clientv3.Op{
		clientv3.OpTxn([]clientv3.Cmp{ifAbsent}, []clientv3.Op{create}, nil),
		clientv3.OpGet(etcdEpochKey),
	}
}

// readEpoch returns the epoch in resp, the answer to epochOps's read. It
// returns an error wrapping ErrUnavailable and errBadEpoch if the key is
// missing or does not hold a positive number.
func readEpoch(resp *pb.ResponseOp, key string) (int64, error) {
	kvs := resp.GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return 0, fmt.Errorf("%w: acquire %q: %w: %q is missing", dlock.ErrUnavailable, key, errBadEpoch, etcdEpochKey)
	}
	epoch, err := strconv.ParseInt(string(kvs[0].Value), 10, 64)
	if err != nil || epoch <= 0 {
		return 0, fmt.Errorf("%w: acquire %q: %w: %q holds %q", dlock.ErrUnavailable, key, errBadEpoch, etcdEpochKey, kvs[0].Value)
	}
	return epoch, nil
}
