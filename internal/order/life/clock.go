package life

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The one clock. A deadline is stamped and compared by the database, in
// Unix milliseconds: every shop asks the same clock, so a shop whose own
// clock is seconds off neither expires an order early nor lets one be paid
// late. No shop's time.Now decides anything in this package.

// NowMs is the SQL expression for the database's now in Unix
// milliseconds, for db's dialect: NOW(6) on MySQL and MariaDB, julianday
// on SQLite (its 'now' is the statement's, to the millisecond).
func NowMs(db *gorm.DB) string {
	if db.Dialector.Name() == "sqlite" {
		return "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"
	}
	return "FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000)"
}

// Stamp sets the deadline of the pending orders ids, just inserted in tx,
// to the database's now plus within. Their shop calls it in the
// transaction that writes them.
func Stamp(tx *gorm.DB, within time.Duration, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	stmt := fmt.Sprintf("UPDATE orders SET deadline_ms = %s + ? WHERE id IN ?", NowMs(tx))
	return tx.Exec(stmt, within.Milliseconds(), ids).Error
}

// deadline converts a stored deadline; nil is none.
func deadline(ms *int64) time.Time {
	if ms == nil {
		return time.Time{}
	}
	return time.UnixMilli(*ms).UTC()
}
