package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	gosqlite "github.com/glebarez/go-sqlite"
	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
)

// SQLite settings. SQLite lets many connections read at once but only one
// write at a time; the settings below make writers queue instead of fail:
//
//   - journal_mode=WAL: readers never block the writer and the writer never
//     blocks readers.
//   - busy_timeout: a connection that finds the write lock taken waits (up
//     to SQLiteBusyTimeout) instead of failing at once with SQLITE_BUSY.
//   - _txlock=immediate: transactions take the write lock at BEGIN. With
//     the default (deferred) a transaction that reads first and writes later
//     has to upgrade its lock, and if another writer committed meanwhile
//     SQLite fails it with SQLITE_BUSY at once, busy_timeout or not.
//   - synchronous=NORMAL: safe with WAL, and no fsync per commit.
//   - a small pool: concurrent writers beyond it wait in database/sql's
//     queue, in order, rather than in SQLite's sleeping busy handler.
const (
	// SQLiteBusyTimeout is the longest a SQLite statement waits for the
	// write lock; no context interrupts that wait.
	SQLiteBusyTimeout = 10 * time.Second
	sqliteMaxOpen     = 8
)

// OpenSQLite opens (creating it if needed) the SQLite database file at path
// with the pure-Go driver, so no cgo is needed, and pings it within ctx. The
// returned *gorm.DB is safe for concurrent use, including concurrent write
// transactions from many goroutines (they queue; see the settings above),
// and the caller must close it (db.DB() then Close) when done.
//
// Errors wrap ErrInvalidDSN for an empty path or ":memory:" (every pooled
// connection would get its own empty database) and ErrUnavailable when the
// file cannot be opened.
func OpenSQLite(ctx context.Context, path string, opts ...Option) (*gorm.DB, error) {
	if path == "" || path == ":memory:" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("%w: sqlite path %q: want a file name without '?'", ErrInvalidDSN, path)
	}
	o := buildOptions(sqliteMaxOpen, opts)
	dsn := path + "?" + strings.Join([]string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", SQLiteBusyTimeout.Milliseconds()),
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_pragma=foreign_keys(1)",
		"_txlock=immediate",
	}, "&")
	var connector driver.Connector = dsnConnector{dsn: dsn, driver: &gosqlite.Driver{}}
	if o.wrap != nil {
		connector = o.wrap(connector)
	}
	sqlDB := sql.OpenDB(connector)
	sqlDB.SetMaxOpenConns(o.maxOpen)
	sqlDB.SetMaxIdleConns(o.maxOpen)
	sqlDB.SetConnMaxIdleTime(0) // opening a SQLite connection re-runs the pragmas: keep them

	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("%w: open sqlite %s: %v", ErrUnavailable, path, err)
	}
	db, err := gorm.Open(sqlite.Dialector{Conn: sqlDB}, gormConfig(o))
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("%w: open sqlite %s: %v", ErrUnavailable, path, err)
	}
	return db, nil
}

// dsnConnector adapts a driver that only knows Open(name) to
// driver.Connector, so that it can be wrapped (WithConnector).
type dsnConnector struct {
	dsn    string
	driver driver.Driver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.driver.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.driver }
