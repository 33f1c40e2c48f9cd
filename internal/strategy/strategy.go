// Package strategy names the ways a flash sale can keep a hot product from
// overselling, chosen per product at creation; package order sells by it.
// The constants run from the locks that are there to fail, through fenced,
// consensus and database locks, to the lock-free strategies.
package strategy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/zklock"
)

// ErrUnknown is wrapped by Parse's error for a name it does not know.
var ErrUnknown = errors.New("strategy: unknown")

// Name is a strategy's one name, as products, flags and reports spell it.
// The zero value is not a strategy.
type Name string

// The strategies, in the order the load generator runs them.
const (
	// Off takes no lock: buyers overlap and oversell, repeated clicks
	// become duplicate orders.
	Off Name = "off"
	// Naive locks with SETNX, then EXPIRE, and never renews: oversells
	// when the work outlasts the TTL.
	Naive Name = "naive"
	// Lua locks with SET NX PX, an owner token and a renewing watchdog:
	// exact until a commit lands after its lease ran out.
	Lua Name = "lua"
	// Redlock is the lua lock on a majority of five Redis masters.
	Redlock Name = "redlock"
	// Fenced is the lua lock plus a fencing token that the database
	// registers before the stock is read and refuses when it is stale.
	Fenced Name = "fenced"
	// Etcd is a lock on an etcd cluster (a lease per holder, waiters queued
	// by revision), fenced by the lock key's revision as Fenced is.
	Etcd Name = "etcd"
	// ZooKeeper is ZooKeeper's lock recipe on an ensemble (an ephemeral
	// sequential node per holder, each waiter watching the one before it,
	// the session as the lease), fenced by the node's creation zxid as
	// Etcd is by its revision.
	ZooKeeper Name = "zookeeper"
	// SQLForUpdate locks the product's row in the database (SELECT … FOR
	// UPDATE) and holds it across the check, the work and the write, to
	// the commit: no Redis, no lease, and one buyer at a time.
	SQLForUpdate Name = "sql-for-update"
	// SQLVersion is the optimistic lock: read the stock and the row's
	// version, work, then write only if the version is still the one read
	// (UPDATE … WHERE version = ?), else read and work again, a few times.
	SQLVersion Name = "sql-version"
	// SQLAtomic takes no lock: a conditional UPDATE decrements the stock
	// and a unique key allows one order per buyer.
	SQLAtomic Name = "sql-atomic"
	// SQLOneTrip is sql-atomic sent in one round trip: the UPDATE, the
	// order's INSERT and the COMMIT in one stored procedure on MySQL and
	// MariaDB, so the row's lock is held for the server's time only.
	// SQLite, which has no network, sells it as sql-atomic does.
	SQLOneTrip Name = "sql-one-trip"
	// RedisDecr pre-deducts the stock in Redis with one script per order,
	// then writes the order; a failed write gives the unit back.
	RedisDecr Name = "redis-decr"
	// RedisQueue takes the units and queues the order in one Redis script
	// (peak shaving): the buyer is answered 202 at Redis speed, and
	// consumers in every shop write the queued orders in batches.
	RedisQueue Name = "redis-queue"
)

// All lists every strategy, in the order the load generator runs them.
func All() []Name {
	return []Name{Off, Naive, Lua, Redlock, Fenced, Etcd, ZooKeeper, SQLForUpdate, SQLVersion, SQLAtomic, SQLOneTrip, RedisDecr, RedisQueue}
}

// Parse returns the strategy named s, or an error wrapping ErrUnknown that
// lists the names it knows.
func Parse(s string) (Name, error) {
	for _, n := range All() {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fmt.Errorf("%w strategy %q (want %s)", ErrUnknown, s, List())
}

// List returns the names, comma-separated, for messages and --help.
func List() string {
	names := make([]string, 0, len(All()))
	for _, n := range All() {
		names = append(names, string(n))
	}
	return strings.Join(names, ", ")
}

// LockMode returns the dlock.Mode of the lock that guards n's
// read-check-write, and false for the strategies that lock in the database
// or take no lock.
func (n Name) LockMode() (dlock.Mode, bool) {
	switch n {
	case Off:
		return dlock.ModeOff, true
	case Naive:
		return dlock.ModeNaive, true
	case Lua:
		return dlock.ModeLua, true
	case Redlock:
		return dlock.ModeRedlock, true
	case Fenced:
		return dlock.ModeFenced, true
	case Etcd:
		return etcdlock.Mode, true
	case ZooKeeper:
		return zklock.Mode, true
	}
	return "", false
}

// Safe reports whether n claims to sell exactly the stock, with no
// duplicate orders, through stalls and a minority of Redis nodes down:
// every strategy but off and naive, which are there to fail.
func (n Name) Safe() bool { return n != Off && n != Naive }

// Batches reports whether n can serve queued buyers in batches, one lease
// and one transaction for many (stock.Product.BatchMax): lua, redlock,
// fenced and etcd, whose lock is meant to hold.
func (n Name) Batches() bool { return n == Lua || n == Redlock || n == Fenced || n == Etcd }

// SurvivesLateCommit reports whether n stays exact when a commit lands
// after its lease ran out: a lease alone does not (lua, redlock), a fenced
// lease and the strategies without a lease do (the database's row lock is
// held until the commit lands, however late).
func (n Name) SurvivesLateCommit() bool {
	_, leased := n.LockMode()
	return n.Fences() || !leased
}

// Queues reports whether n answers a buyer before the order is written:
// 202 Accepted, the order queued in Redis for the consumers (redis-queue).
func (n Name) Queues() bool { return n == RedisQueue }

// Fences reports whether n's lock mints a fencing token with every grant,
// which the order flow registers in the database before it reads the
// stock: fenced, etcd and zookeeper.
func (n Name) Fences() bool { return n == Fenced || n == Etcd || n == ZooKeeper }
