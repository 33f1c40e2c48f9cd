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

// How sql-for-update waits for the product's row. MariaDB: SELECT … FOR
// UPDATE WAIT n (whole seconds; error 1205 after n). MySQL 8 has no WAIT n:
// the session's innodb_lock_wait_timeout is set to n around the statement
// (a rollback between the two leaves the shorter wait on the pooled
// connection; its 1205 is retried as any). SQLite has no row locks: its one
// write lock, taken at BEGIN (BEGIN IMMEDIATE), locks every product and
// waits in the busy handler (database.SQLiteBusyTimeout), which no context
// interrupts; the no-op UPDATE (orderdb.TakeRow) says what it relies on.

// Database flavours, as rowFlavor tells them apart.
const (
	flavorUnknown int32 = iota
	flavorSQLite
	flavorMariaDB
	flavorMySQL
)

// lockRow locks product p's row in tx, waiting at most the lock wait, and
// returns its stock, read under the lock. A wait that runs out wraps
// ErrLockTimeout, not the database's error (which the transaction's
// retries would wait out again); an unknown product is stock.ErrNotFound.
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
