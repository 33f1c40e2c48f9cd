package main

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/flashsale/flashsale/internal/netsim"
)

// rowLock is the database's own lock, as sql-for-update takes it: a
// transaction locks the key's row with SELECT … FOR UPDATE, and its COMMIT
// lets it go. A waiter queues in the database's lock manager, holding a
// pooled connection meanwhile. The rows live in a table of the run's own,
// one per key, created at open and dropped by Close.
type rowLock struct {
	db      *sql.DB
	table   string
	lock    string // the statement that locks row ?
	server  string // "MariaDB 10.11.6", as the server says it
	created bool   // the table is the run's: Close drops it
}

// openRowLock opens a pool of up to pool connections on dsn, each with
// innodb_lock_wait_timeout set to wait in whole seconds (at least one),
// and creates table with rows 0 … keys-1. Statements are sent with their
// arguments in them (interpolateParams), one round trip each, whatever the
// DSN says: a BEGIN, the SELECT and the COMMIT are then three. Over TCP
// it dials through n's DB link (a nil n: the server itself).
func openRowLock(ctx context.Context, dsn string, n *netsim.Network, table string, keys, pool int, wait time.Duration) (*rowLock, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	server := cfg.Addr
	if cfg.Net == "tcp" {
		if cfg.Addr, err = n.Addr(netsim.DB, cfg.Addr); err != nil {
			return nil, err
		}
	}
	cfg.InterpolateParams = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["innodb_lock_wait_timeout"] = strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second)))
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(pool)
	db.SetMaxIdleConns(pool)
	r := &rowLock{db: db, table: table, lock: "SELECT id FROM " + table + " WHERE id = ? FOR UPDATE"}
	if err := r.create(ctx, keys); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", server, err)
	}
	return r, nil
}

// create reads the server's version and creates the table with its rows.
func (r *rowLock) create(ctx context.Context, keys int) error {
	var version string
	if err := r.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return err
	}
	r.server = "MySQL " + version
	if v, _, ok := strings.Cut(version, "-MariaDB"); ok {
		r.server = "MariaDB " + v
	}
	if _, err := r.db.ExecContext(ctx, "CREATE TABLE "+r.table+" (id INT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		return err
	}
	r.created = true
	values := make([]string, keys)
	for i := range values {
		values[i] = "(" + strconv.Itoa(i) + ")"
	}
	_, err := r.db.ExecContext(ctx, "INSERT INTO "+r.table+" (id) VALUES "+strings.Join(values, ","))
	return err
}

// Acquire locks row key in a new transaction; the function it returns
// commits, which lets the row go. A wait longer than the lock wait fails
// with the server's lock wait timeout, and the transaction is rolled back.
func (r *rowLock) Acquire(ctx context.Context, key int) (func(context.Context) error, error) {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	var id int
	if err := tx.QueryRowContext(ctx, r.lock, key).Scan(&id); err != nil {
		tx.Rollback()
		return nil, err
	}
	return func(context.Context) error { return tx.Commit() }, nil
}

// Close drops the table, if the run created it, and closes the pool.
func (r *rowLock) Close() {
	if r.created {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.db.ExecContext(ctx, "DROP TABLE "+r.table)
	}
	r.db.Close()
}
