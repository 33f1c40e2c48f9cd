package dlock

import (
	"github.com/redis/go-redis/v9"
)

// NewFenced returns a fenced locker on c: the lua lock, which waits,
// renews, refreshes and releases exactly as NewLua's does, but whose every
// grant also mints a fencing token (see Lock.Fence) from a counter kept in
// Redis beside the lock key, under the key followed by ":fence". That
// counter never expires, and no other lock key may be named like it (nor
// like the turns, see NewLua). c must not be nil and stays the caller's to
// close.
func NewFenced(c redis.UniversalClient) *Lua { return newLua(c, true) }

// Fence returns the fencing token minted with this grant: for the fenced
// mode, a number greater than that of every earlier grant of the same key
// on the same Redis node; for a lock of another package (etcdlock,
// zklock), what that package says, such as the creation revision of the
// grant's queue key on etcd, greater than that of every earlier grant of
// the same key on the same cluster (see Epoch for a cluster that is
// replaced); 0 for every other mode. It is safe for concurrent use.
//
// It is for the store the protected work writes to. Send the fence with
// every write, and have the store keep the highest fence it has seen and
// refuse work that carries an older one. A holder that lost the lock
// without noticing in time (paused past its TTL, its renewals lost) then
// cannot commit over the work of the holder after it, which no lock can
// prevent by itself.
//
// The fenced mode's counter lives in Redis, so it is only as durable as
// that Redis: one that loses its data (restarted without persistence, or
// failed over to a replica that had not caught up) starts counting again,
// and a store that checks fences then refuses every holder until the count
// passes the highest fence it has seen. That is safe, but it stalls the
// work.
func (l *Lock) Fence() int64 { return l.fence }

// Epoch returns the epoch of the cluster that granted this lock: for etcd,
// the unix time in milliseconds at which that cluster first served a lock
// (kept in the cluster, see package etcdlock); 0 for every Redis mode,
// whose fences come from one counter beside the key, not from a cluster
// that is replaced (for a Redis that loses that counter, see Fence). It is
// safe for concurrent use.
//
// A store that checks fences orders grants by (Epoch, Fence), compared
// lexicographically: a grant is newer if its epoch is later, or if the
// epochs are equal and its fence is greater. An etcd fence is a revision
// of the cluster that granted it, and a cluster rebuilt empty counts its
// revisions from 1 again; but it has a later epoch, so its first holder is
// accepted at once, and a stale holder from the old cluster, whose epoch
// is older, is refused.
//
// That relies on the wall clock moving forward between the old cluster's
// first lock and the new cluster's. A cluster restored from a snapshot
// brings the old epoch back, with the old revisions: restore with
// "etcdutl snapshot restore --bump-revision N --mark-compacted", as etcd's
// docs advise, N more than the revisions the cluster went through since
// the snapshot.
func (l *Lock) Epoch() int64 { return l.epoch }
