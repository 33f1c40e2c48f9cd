package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// applyPending runs on one connection that already holds the migration
// lock: it creates the history table, reads what ran, and applies the rest
// that run on d, each statement adapted for d.
func applyPending(ctx context.Context, conn *sql.Conn, all []migration, d dialect) error {
	if _, err := conn.ExecContext(ctx, d.adapt(createHistory)); err != nil {
		return fmt.Errorf("migrations: create schema_migrations: %w", err)
	}
	done, err := appliedVersions(ctx, conn)
	if err != nil {
		return err
	}
	for _, m := range all {
		if done[m.version] {
			continue
		}
		for i, stmt := range d.statements(m) {
			if _, err := conn.ExecContext(ctx, d.adapt(stmt)); err != nil {
				return fmt.Errorf("migrations: %s.sql statement %d: %w", m.version, i+1, err)
			}
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		if _, err := conn.ExecContext(ctx,
			"INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", m.version, now); err != nil {
			return fmt.Errorf("migrations: record %s: %w", m.version, err)
		}
	}
	return nil
}

func appliedVersions(ctx context.Context, conn *sql.Conn) (map[string]bool, error) {
	rows, err := conn.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("migrations: read schema_migrations: %w", err)
	}
	defer rows.Close()
	done := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("migrations: read schema_migrations: %w", err)
		}
		done[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrations: read schema_migrations: %w", err)
	}
	return done, nil
}

// waitSeconds is how long to wait for the lock: until ctx's deadline, or
// lockWait when ctx has none.
func waitSeconds(ctx context.Context) int {
	wait := lockWait
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl)
	}
	if s := int(wait.Seconds()); s > 0 {
		return s
	}
	return 0
}
