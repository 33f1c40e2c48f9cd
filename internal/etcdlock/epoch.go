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

// An etcd grant's fence is the creation revision of its queue key. Within
// one cluster revisions only go up, so a later grant carries a larger
// fence. But a cluster rebuilt empty (new members on empty disks, an
// embedded cluster that kept nothing, a snapshot restored without
// --bump-revision) counts its revisions from 1 again, and a store that has
// seen fence 302 refuses every new holder until the revisions pass it.
//
// So every grant also carries the cluster's epoch: the number under
// etcdEpochKey, the unix time in milliseconds at which that cluster first
// served a lock. The transaction that queues a key creates the epoch key
// if it is absent and reads it, so a grant's epoch and its fence always
// come from the same cluster. A store that orders grants by (epoch, fence)
// then accepts the first holder on a rebuilt cluster at once, since its
// epoch is later, and refuses a stale holder from the old cluster.
//
// What it does not promise: the epoch is a reading of the wall clock of
// the process that took the cluster's first lock, so it relies on the
// clock moving forward between the old cluster's first lock and the new
// one's. And a cluster restored from a snapshot brings the old epoch back
// with the old revisions: restore with etcdutl snapshot restore
// --bump-revision N --mark-compacted, as etcd's docs advise, so that its
// revisions pass every fence handed out after the snapshot was taken.

// etcdEpochKey is the key that holds a cluster's epoch. It has no "/":
// every queue key has one ("<key>/<lease>"), and a queue is read as the
// range of keys that begin with "<key>/", so the epoch key is never a
// queue key nor inside a queue. Lock keys themselves are never stored, so
// even a lock named "dlock:epoch" leaves it alone.
const etcdEpochKey = "dlock:epoch"

// errBadEpoch means the epoch key holds something other than a positive
// number: it was written by something other than this package, and no grant on
// that cluster can carry an epoch until it is fixed.
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
