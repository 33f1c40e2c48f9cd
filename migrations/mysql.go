package migrations

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
)

// applyMySQL serialises concurrent Apply calls with a MySQL named lock.
// GET_LOCK belongs to the connection that took it, so the lock, the
// migrations and RELEASE_LOCK all run on one pinned connection; if the
// process dies, the server drops the connection and the lock with it.
// MySQL cannot roll DDL back, so there is no transaction: each file is
// recorded right after it ran.
func applyMySQL(ctx context.Context, db *sql.DB, all []migration) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	defer conn.Close()

	var dbName sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&dbName); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if !dbName.Valid {
		return fmt.Errorf("migrations: no database selected (the DSN needs /dbname)")
	}
	// Named locks are server-wide, so the name includes the database: two
	// databases on one server migrate independently. Names are limited to
	// 64 characters, hence the hash.
	sum := sha256.Sum256([]byte(dbName.String))
	name := "flashsale_migrate_" + hex.EncodeToString(sum[:8])

	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", name, waitSeconds(ctx)).Scan(&got); err != nil {
		return fmt.Errorf("migrations: GET_LOCK: %w", err)
	}
	if got.Int64 != 1 {
		return fmt.Errorf("%w (database %s, lock %s)", ErrLocked, dbName.String, name)
	}
	// Release with a fresh context: ctx may be done, and the lock must not
	// outlive this call on a connection that goes back to the pool.
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(?)", name)

	return applyPending(ctx, conn, all, mysql)
}
