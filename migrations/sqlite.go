package migrations

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"
)

// applySQLite applies everything in one transaction that takes SQLite's
// write lock up front (BEGIN IMMEDIATE): a second process waits for the
// first to commit, then finds everything recorded. SQLite DDL is
// transactional, so a failure leaves nothing half applied.
func applySQLite(ctx context.Context, db *sql.DB, all []migration) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	defer conn.Close()

	if err := beginImmediate(ctx, conn); err != nil {
		return err
	}
	defer func() {
		if err == nil {
			if err = exec(ctx, conn, "COMMIT"); err == nil {
				return
			}
		}
		// Roll back, or throw the connection away so that it never returns
		// to the pool inside a transaction.
		if exec(context.WithoutCancel(ctx), conn, "ROLLBACK") != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return applyPending(ctx, conn, all, sqlite)
}

// beginImmediate takes the write lock, retrying while another connection
// holds it. The driver already waits busy_timeout per attempt; the loop
// covers databases opened without one, up to ctx's deadline or lockWait.
func beginImmediate(ctx context.Context, conn *sql.Conn) error {
	deadline := time.Now().Add(time.Duration(waitSeconds(ctx)) * time.Second)
	for {
		err := exec(ctx, conn, "BEGIN IMMEDIATE")
		if err == nil {
			return nil
		}
		if !isBusy(err) {
			return fmt.Errorf("migrations: BEGIN IMMEDIATE: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %v", ErrLocked, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrLocked, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func exec(ctx context.Context, conn *sql.Conn, stmt string) error {
	_, err := conn.ExecContext(ctx, stmt)
	return err
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	s := err.Error()
	return strings.Contains(s, "SQLITE_BUSY") || strings.Contains(s, "database is locked")
}
