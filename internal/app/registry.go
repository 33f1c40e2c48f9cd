package app

// The shop registry: why a shop writes its lock servers into the database.
//
// Shops that share a database must share their lock servers too. A lua
// lock taken on one Redis excludes nobody who locks on another, and an
// etcd or ZooKeeper lock excludes nobody on another cluster: the orders of two such
// shops interleave and the stock oversells, and nothing else would notice.
// The easy way in is a shop given --mysql-dsn but not --redis or --etcd,
// which starts embedded servers of its own.
//
// So NewShop first adds the shop's row to the table shops (its id and
// lockServersOf its backends), and only then reads the rows of the other
// live shops: those whose heartbeat, seen_at, is younger than staleAfter.
// If one of them locks on other servers, the shop removes its row and
// refuses to start. The row goes in before the read, each statement
// committed on its own, so that two shops starting at the same moment
// cannot both miss each other: whichever reads second finds the other's
// row (both may, and then both refuse). Times are the database's clock,
// so that shops whose machines' clocks disagree still agree on who is
// live.
//
// What it does not promise. A shop cut off from the database for longer
// than staleAfter looks crashed, and a shop on other servers may start
// beside it; the first one's next heartbeat logs the conflict as an error
// but keeps serving. Servers are compared as written, except that a
// loopback address carries the machine's name (it is another server on
// every machine): two names for one server count as two, which refuses a
// start that was safe, and one name for two servers (a host name that
// resolves differently on two networks) counts as one, which is not caught.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"gorm.io/gorm"
)

// A live shop renews its row every heartbeatEvery; a row not renewed for
// staleAfter, three missed heartbeats, belongs to a shop that is gone.
const (
	heartbeatEvery = 2 * time.Second
	staleAfter     = 3 * heartbeatEvery
)

// registration is one shop's row in the table shops, renewed by a
// heartbeat until close.
type registration struct {
	db      *gorm.DB
	clock   dbClock
	id      string
	servers LockServers
	log     *slog.Logger
	stop    context.CancelFunc // ends the heartbeat
	done    chan struct{}      // closed when the heartbeat has ended
}

// register is NewShop's first step (see the comment at the top of this
// file): it adds the shop's row and starts its heartbeat. If another live
// shop on db locks on other servers, it removes the row again and returns
// a *LockServersError; other errors are the database's. The caller must
// close a registration it got.
func register(ctx context.Context, db *gorm.DB, servers LockServers, log *slog.Logger) (*registration, error) {
	r := &registration{db: db, clock: clockOf(db), id: newShopID(), servers: servers, log: log}
	// Crashed shops' rows only ever get older.
	if err := db.WithContext(ctx).Exec("DELETE FROM shops WHERE seen_at < " + r.clock.staleBefore).Error; err != nil {
		return nil, fmt.Errorf("app: shop registry: %w", err)
	}
	if err := r.insert(ctx); err != nil {
		return nil, err
	}
	if err := r.check(ctx); err != nil {
		r.remove()
		return nil, err
	}
	hb, stop := context.WithCancel(context.Background())
	r.stop, r.done = stop, make(chan struct{})
	go r.heartbeat(hb)
	log.Info("shop registry: no live shop on this database locks on other servers", "shop", r.id, "lock_servers", servers.String())
	return r, nil
}

// insert adds the shop's row, seen now.
func (r *registration) insert(ctx context.Context) error {
	err := r.db.WithContext(ctx).Exec("INSERT INTO shops (id, redis_nodes, redis_master, etcd_endpoints, zookeeper, seen_at) VALUES (?, ?, ?, ?, ?, "+r.clock.now+")",
		r.id, r.servers.Redis, r.servers.RedisMaster, r.servers.Etcd, r.servers.ZooKeeper).Error
	if err != nil {
		return fmt.Errorf("app: shop registry: %w", err)
	}
	return nil
}

// check returns a *LockServersError for the first other live shop whose
// servers differ from this one's, nil if there is none, or the database's
// error.
func (r *registration) check(ctx context.Context) error {
	var others []struct {
		ID, RedisNodes, RedisMaster, EtcdEndpoints string
		ZooKeeper                                  string `gorm:"column:zookeeper"` // not zoo_keeper
	}
	err := r.db.WithContext(ctx).Raw("SELECT id, redis_nodes, redis_master, etcd_endpoints, zookeeper FROM shops WHERE id <> ? AND seen_at >= "+r.clock.staleBefore+" ORDER BY id",
		r.id).Scan(&others).Error
	if err != nil {
		return fmt.Errorf("app: shop registry: %w", err)
	}
	for _, o := range others {
		if theirs := (LockServers{Redis: o.RedisNodes, RedisMaster: o.RedisMaster, Etcd: o.EtcdEndpoints, ZooKeeper: o.ZooKeeper}); theirs != r.servers {
			return &LockServersError{Ours: r.servers, Other: o.ID, Theirs: theirs}
		}
	}
	return nil
}

// heartbeat renews the row every heartbeatEvery until ctx ends, and checks
// again: a shop that could not see this one's row (the database was out of
// reach for longer than staleAfter) may have started on other servers.
func (r *registration) heartbeat(ctx context.Context) {
	defer close(r.done)
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		beat, cancel := context.WithTimeout(ctx, heartbeatEvery)
		err := r.beat(beat)
		cancel()
		var conflict *LockServersError
		switch {
		case errors.As(err, &conflict):
			r.log.Error("shop registry: a live shop on this database locks on other servers; their orders may oversell", "err", err)
		case err != nil && ctx.Err() == nil:
			r.log.Warn("shop registry: heartbeat failed", "shop", r.id, "err", err)
		}
	}
}

// beat renews seen_at, puts the row back if another shop removed it as
// stale, and checks.
func (r *registration) beat(ctx context.Context) error {
	res := r.db.WithContext(ctx).Exec("UPDATE shops SET seen_at = "+r.clock.now+" WHERE id = ?", r.id)
	if res.Error != nil {
		return fmt.Errorf("app: shop registry: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		if err := r.insert(ctx); err != nil {
			return err
		}
	}
	return r.check(ctx)
}

// close ends the heartbeat and removes the row. Shop.Close calls it once.
func (r *registration) close() {
	r.stop()
	<-r.done
	r.remove()
}

// remove deletes the row. It logs a failure, which is harmless: the row
// goes stale.
func (r *registration) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), heartbeatEvery)
	defer cancel()
	if err := r.db.WithContext(ctx).Exec("DELETE FROM shops WHERE id = ?", r.id).Error; err != nil {
		r.log.Warn("shop registry: could not remove this shop's row; it goes stale", "shop", r.id, "after", staleAfter, "err", err)
	}
}

// dbClock is SQL for the database's clock in UTC: now, and the moment
// before which a heartbeat is stale.
type dbClock struct{ now, staleBefore string }

func clockOf(db *gorm.DB) dbClock {
	if db.Dialector.Name() == "mysql" {
		return dbClock{"UTC_TIMESTAMP(6)", fmt.Sprintf("UTC_TIMESTAMP(6) - INTERVAL %d MICROSECOND", staleAfter.Microseconds())}
	}
	// SQLite keeps a DATETIME as text; this format sorts as the times do.
	const format = "strftime('%Y-%m-%d %H:%M:%f', 'now'"
	return dbClock{format + ")", fmt.Sprintf("%s, '-%d seconds')", format, staleAfter/time.Second)}
}

// newShopID returns host/pid/random: which machine and process, and unique
// per start.
func newShopID() string {
	host, _ := os.Hostname()
	if len(host) > 64 {
		host = host[:64]
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}
