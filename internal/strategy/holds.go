package strategy

import (
	"math"
	"time"

	"github.com/flashsale/flashsale/internal/netsim"
)

// Hold is what one sale holds its hot product for (its lock or hot row),
// counted in round trips per link: the holding request's reply, the
// releasing one's request, and every full round trip between. While one
// buyer holds it the next waits, so it sets the strategy's ceiling on a
// network (Ceiling). A Hold is plain data.
type Hold struct {
	// Redis, Etcd and ZooKeeper are the round trips held on the lock's link.
	Redis, Etcd, ZooKeeper int
	// DB is the round trips to the database held, where the database locks
	// rows (MySQL, MariaDB): inside the lock, or from the statement that
	// takes the hot row to the COMMIT.
	DB int
	// Tx is the round trips of the sale's transaction after its BEGIN: on
	// SQLite, whose one write lock is taken at BEGIN, a sale holds at least that.
	Tx int
	// Work is whether the business work (work_ms) runs inside the hold.
	Work bool
	// Free, when set, says why nothing is held across a round trip: the
	// strategy's ceiling is not the network's (but on SQLite, where a
	// strategy with a Tx still holds the database's one write lock).
	Free string
}

// FreeOn reports whether h holds nothing across a round trip on this
// database: Free, unless sqlite and its transaction holds SQLite's lock.
func (h Hold) FreeOn(sqlite bool) bool { return h.Free != "" && !(sqlite && h.Tx > 0) }

// holds is each strategy's Hold, counted in its order flow (package order)
// and checked by measuring one order's round trips (order's holds_test.go).
var holds = map[Name]Hold{
	// No lock: the row from writeStock's UPDATE, then the INSERT and COMMIT.
	Off: {DB: 2, Tx: 3},
	// The lock's reply and release (1 Redis); the stock and the buyer's
	// orders read, BEGIN, UPDATE, INSERT, COMMIT (6 DB); the work.
	Naive: {Redis: 1, DB: 6, Tx: 3, Work: true},
	// As naive: grant to release, and the six database trips between.
	Lua: {Redis: 1, DB: 6, Tx: 3, Work: true},
	// As lua, on five masters at once: their replies come in one round trip.
	Redlock: {Redis: 1, DB: 6, Tx: 3, Work: true},
	// As lua, plus the fence's registration (an UPDATE) first in the
	// transaction, which reads the stock and the buyer's orders (7 DB).
	Fenced: {Redis: 1, DB: 7, Tx: 6, Work: true},
	// Fenced's seven database trips inside an etcd lock's grant and release.
	Etcd: {Etcd: 1, DB: 7, Tx: 6, Work: true},
	// Fenced's seven database trips inside a ZooKeeper lock's grant and release.
	ZooKeeper: {ZooKeeper: 1, DB: 7, Tx: 6, Work: true},
	// The row from SELECT … FOR UPDATE: the buyer's orders read, the work,
	// UPDATE, INSERT, COMMIT (4 DB). On SQLite from BEGIN: 6 with the
	// no-op UPDATE that takes the lock and the stock's read.
	SQLForUpdate: {DB: 4, Tx: 6, Work: true},
	// The window from the version's read to the COMMIT that moves it: the
	// buyer's orders read, the work, BEGIN, INSERT, UPDATE, COMMIT (5 DB).
	SQLVersion: {DB: 5, Tx: 3, Work: true},
	// The row from the conditional UPDATE, the transaction's last
	// statement, to the COMMIT (1 DB); the work runs before it.
	SQLAtomic: {DB: 1, Tx: 3},
	// UPDATE, INSERT and COMMIT in one round trip: the row is held for the
	// server's time only. SQLite sells it as sql-atomic (Tx 3).
	SQLOneTrip: {Tx: 3, Free: "its UPDATE, INSERT and COMMIT reach the database in one round trip: the row is held for the server's own time only"},
	// One Redis script takes the units: the hot key is held for the
	// server's time, no round trip; the orders are written in groups.
	RedisDecr: {Free: "its hot key is taken by one Redis script, held for Redis's own time only"},
	// One Redis script takes the units and queues the order; it is
	// answered before the order is written.
	RedisQueue: {Free: "one Redis script takes the units and queues the order, held for Redis's own time only"},
}

// Holds returns n's Hold, and false for a name without one.
func (n Name) Holds() (Hold, bool) {
	h, ok := holds[n]
	return h, ok
}

// Time is how long one hold lasts at rtt with work inside it, where the
// database locks rows; with sqlite, where it has one write lock taken at
// BEGIN (Tx). It is zero for a Free hold.
func (h Hold) Time(rtt netsim.RTT, work time.Duration, sqlite bool) time.Duration {
	if h.FreeOn(sqlite) {
		return 0
	}
	db := h.DB
	if sqlite {
		db = max(db, h.Tx)
	}
	t := time.Duration(h.Redis)*rtt.Of(netsim.Redis) + time.Duration(h.Etcd)*rtt.Of(netsim.Etcd) +
		time.Duration(h.ZooKeeper)*rtt.Of(netsim.ZooKeeper) + time.Duration(db)*rtt.Of(netsim.DB)
	if h.Work {
		t += work
	}
	return t
}

// Ceiling is the most sales per second one product can make at rtt with
// work inside the hold: per sales in each hold (a batch's buyers), on rows
// rows held apart (a stock split over buckets). With sqlite every bucket
// shares the one write lock, so rows lifts the row's ceiling only.
// ok is false without one: a Free hold, or no RTT on any link.
func (h Hold) Ceiling(rtt netsim.RTT, work time.Duration, sqlite bool, per, rows int) (perSecond float64, ok bool) {
	if h.FreeOn(sqlite) || rtt.IsZero() {
		return 0, false
	}
	per, rows = max(per, 1), max(rows, 1)
	c := math.Inf(1)
	if row := h.Time(rtt, work, false); row > 0 {
		c = float64(per*rows) / row.Seconds()
	}
	if whole := h.Time(rtt, work, true); sqlite && whole > 0 {
		c = min(c, float64(per)/whole.Seconds())
	}
	return c, !math.IsInf(c, 1)
}
