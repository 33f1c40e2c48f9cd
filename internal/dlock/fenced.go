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

// Fence returns the fencing token minted with this grant: for fenced, a
// number above every earlier grant's of the key on that Redis; for etcd,
// the grant's revision (see Epoch); 0 for every other mode. A store that
// keeps the highest fence it has seen and refuses an older one keeps out a
// holder that lost the lock without noticing, which no lock can stop by
// itself. The counter is only as durable as its Redis: docs/fenced-etcd.md
// says what a Redis that loses it costs. It is safe for concurrent use.
func (l *Lock) Fence() int64 { return l.fence }

// Epoch returns the epoch of the cluster that granted this lock (etcd: when
// it first served a lock, see package etcdlock), 0 for every Redis mode. A
// store orders grants by (Epoch, Fence): a cluster rebuilt empty counts its
// revisions from 1 again, but its later epoch keeps a stale holder of the
// old one out. It is safe for concurrent use.
func (l *Lock) Epoch() int64 { return l.epoch }
