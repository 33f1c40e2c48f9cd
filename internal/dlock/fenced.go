package dlock

import (
	"github.com/redis/go-redis/v9"
)

// NewFenced returns a fenced locker on c: the lua lock, whose every grant
// also mints a fencing token (Lock.Fence) from a counter under the key
// followed by ":fence", which never expires and no other lock key may be
// named like. c must not be nil and stays the caller's to close.
func NewFenced(c redis.UniversalClient) *Lua { return newLua(c, true) }

// Fence returns the fencing token minted with this grant, above every
// earlier grant's of the key (fenced: a Redis counter; etcd: the revision;
// zookeeper: the zxid), 0 for other modes. A store that refuses an older
// fence than it has seen keeps out a holder that lost the lock unaware.
// It is safe for concurrent use.
func (l *Lock) Fence() int64 { return l.fence }

// Epoch returns the epoch of the cluster that granted this lock (etcd,
// zookeeper), 0 for Redis. Stores order grants by (Epoch, Fence), so a
// cluster rebuilt empty still outranks a stale holder. Safe for concurrent use.
func (l *Lock) Epoch() int64 { return l.epoch }
