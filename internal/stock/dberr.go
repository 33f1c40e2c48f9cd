package stock

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	sqlite "github.com/glebarez/go-sqlite"
	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"
)

// translate wraps a database error from an operation described by format:
// connection failures become ErrUnavailable; anything else (a context that
// ended, a bug) is wrapped as it is.
func translate(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if IsConnError(err) {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
	}
	return fmt.Errorf("stock: %s: %w", what, err)
}

// IsConnError reports whether err says the database could not be reached or
// serve (refused, reset or bad connections, shutdowns, a locked or missing
// SQLite file): answer it with 503, not 500. Package order uses it too.
func IsConnError(err error) bool {
	// A caller's ended context is not an outage (though a net.Error).
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var netErr net.Error
	var myErr *mysql.MySQLError
	var liteErr *sqlite.Error
	switch {
	case errors.Is(err, driver.ErrBadConn),
		errors.Is(err, sql.ErrConnDone),
		errors.Is(err, mysql.ErrInvalidConn),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE),
		errors.As(err, &netErr):
		return true
	case errors.As(err, &myErr):
		switch myErr.Number {
		case 1040, // too many connections
			1053, // server shutdown in progress
			1077, // normal shutdown
			1927, // connection was killed
			4031: // disconnected by the server because of inactivity
			return true
		}
	case errors.As(err, &liteErr):
		switch liteErr.Code() & 0xff { // primary result code
		case 5, // SQLITE_BUSY
			6,  // SQLITE_LOCKED
			10, // SQLITE_IOERR
			14: // SQLITE_CANTOPEN
			return true
		}
	}
	// database/sql's "database is closed" has no exported sentinel.
	return strings.Contains(err.Error(), "sql: database is closed")
}

// IsDuplicateKey reports whether err is a primary-key or unique violation:
// MySQL/MariaDB error 1062, SQLite SQLITE_CONSTRAINT_PRIMARYKEY or _UNIQUE,
// or gorm's own ErrDuplicatedKey when the dialector translates errors.
// Package order uses it for the lock-free strategies' one order per buyer.
func IsDuplicateKey(err error) bool {
	var myErr *mysql.MySQLError
	var liteErr *sqlite.Error
	switch {
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return true
	case errors.As(err, &myErr):
		return myErr.Number == 1062
	case errors.As(err, &liteErr):
		return liteErr.Code() == 1555 || liteErr.Code() == 2067
	}
	return false
}

// IsConflict reports whether the database gave up on a statement over lock
// contention (MySQL/MariaDB deadlock 1213 or lock wait timeout 1205): package
// order runs the transaction again, then answers 503.
func IsConflict(err error) bool {
	var myErr *mysql.MySQLError
	return errors.As(err, &myErr) && (myErr.Number == 1213 || myErr.Number == 1205)
}

// IsLockWaitTimeout reports whether a statement waited for a lock as long
// as the database allows (MySQL/MariaDB 1205, SQLite SQLITE_BUSY), having
// done nothing; sql-for-update answers it as a lock timeout.
func IsLockWaitTimeout(err error) bool {
	var myErr *mysql.MySQLError
	var liteErr *sqlite.Error
	switch {
	case errors.As(err, &myErr):
		return myErr.Number == 1205
	case errors.As(err, &liteErr):
		return liteErr.Code()&0xff == 5 // SQLITE_BUSY
	}
	return false
}
