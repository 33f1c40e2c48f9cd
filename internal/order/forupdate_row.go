package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// How sql-for-update waits for the product's row, on each database.
//
// MariaDB says the wait in the statement: SELECT … FOR UPDATE WAIT n, in
// whole seconds, fails with a lock wait timeout (1205) after n seconds and
// leaves nothing behind. MySQL 8 has FOR UPDATE NOWAIT but no WAIT n, so
// there the session's innodb_lock_wait_timeout is set to n for the
// statement and put back after it (a transaction rolled back between the
// two, its buyer gone, leaves its pooled connection with the shorter wait;
// a 1205 is then retried as any lock wait timeout is).
//
// SQLite has no row locks and no FOR UPDATE. Its nearest equivalent is its
// one write lock, which every transaction of this shop takes at BEGIN
// (BEGIN IMMEDIATE: package database opens SQLite so): coarser, since it
// locks every product, not one row, and it waits in SQLite's busy handler
// for up to the busy timeout (database.SQLiteBusyTimeout), which no
// context interrupts, rather than for the lock wait. The no-op UPDATE
// (orderdb.TakeRow) says in the transaction what it relies on, and would take
// the lock if BEGIN had not.

// Database flavours, as rowFlavor tells them apart.
const (
	flavorUnknown int32 = iota
	flavorSQLite
	flavorMariaDB
	flavorMySQL
)

// lockRow locks product p's row in tx, waiting at most the lock wait, and
// returns its stock, read under the lock. A wait that runs out is an error
// wrapping ErrLockTimeout (and not the database's error, which the
// transaction's retries would take for a conflict and wait out again); an
// unknown product is stock.ErrNotFound.
func (s *Service) lockRow(ctx context.Context, tx *gorm.DB, p stock.Product) (int, error) {
	flavor, err := s.rowFlavor(ctx, tx)
	if err != nil {
		return 0, err
	}
	wait := lockWaitSeconds(s.opts.LockWait)
	const read = "SELECT stock FROM products WHERE id = ?"
	// A wait for the row is the lock's queue, not a slow query: the
	// database's log of slow statements is not told.
	tx = tx.Session(&gorm.Session{Logger: tx.Logger.LogMode(logger.Silent)})
	var left int
	switch flavor {
	case flavorSQLite:
		if err := orderdb.TakeRow(tx.WithContext(ctx), p.ID); err != nil {
			return 0, err
		}
		err = tx.WithContext(ctx).Raw(read, p.ID).Row().Scan(&left)
	case flavorMariaDB:
		err = tx.WithContext(ctx).Raw(fmt.Sprintf("%s FOR UPDATE WAIT %d", read, wait), p.ID).Row().Scan(&left)
	default:
		if err := tx.WithContext(ctx).Exec(fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", wait)).Error; err != nil {
			return 0, err
		}
		err = tx.WithContext(ctx).Raw(read+" FOR UPDATE", p.ID).Row().Scan(&left)
		if rerr := tx.WithContext(ctx).Exec("SET SESSION innodb_lock_wait_timeout = DEFAULT").Error; err == nil {
			err = rerr
		}
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("%w: product %q", stock.ErrNotFound, p.ID)
	case stock.IsLockWaitTimeout(err):
		return 0, fmt.Errorf("%w: the row of %q, %ds: %v", ErrLockTimeout, p.ID, wait, err)
	}
	return left, err
}

// lockWaitSeconds is the lock wait in the whole seconds the databases
// take, rounded up, and at least 1 (0 would mean NOWAIT).
func lockWaitSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// rowFlavor says which database tx is on, asking the server the first
// time (MySQL or MariaDB), and remembers it.
func (s *Service) rowFlavor(ctx context.Context, tx *gorm.DB) (int32, error) {
	if f := s.flavor.Load(); f != flavorUnknown {
		return f, nil
	}
	f := flavorSQLite
	if tx.Dialector.Name() != "sqlite" {
		var version string
		if err := tx.WithContext(ctx).Raw("SELECT VERSION()").Row().Scan(&version); err != nil {
			return flavorUnknown, err
		}
		f = flavorMySQL
		if strings.Contains(version, "MariaDB") {
			f = flavorMariaDB
		}
	}
	s.flavor.Store(f)
	return f, nil
}
