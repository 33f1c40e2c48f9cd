// Package migrations owns the shop's SQL schema: plain .sql files in this
// directory, embedded in the binary, applied in file-name order and recorded
// in the table schema_migrations. The same files run on MySQL 8, MariaDB
// 10.11 and SQLite, except a file named *.mysql.sql, which runs on MySQL
// and MariaDB only (SQLite records it without running it): for what SQLite
// cannot say and does not need, such as a column's collation.
//
// To change the schema, add a new file with the next number (never edit one
// that has shipped): 0004_something.sql. Statements end with a semicolon at
// the end of a line (after DELIMITER //, with //, as in the mysql client,
// for a procedure's body); lines starting with -- are comments. Prefer one
// statement per file: MySQL cannot roll DDL back, so a file that fails half
// way leaves its first statements applied but the file unrecorded.
package migrations

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

//go:embed *.sql
var files embed.FS

// Errors returned by Apply, wrapped with details; compare with errors.Is.
var (
	// ErrUnsupported means the *gorm.DB is neither MySQL/MariaDB nor SQLite.
	ErrUnsupported = errors.New("migrations: unsupported database")
	// ErrLocked means another process held the migration lock for longer
	// than Apply was willing to wait.
	ErrLocked = errors.New("migrations: another process holds the migration lock")
)

// lockWait bounds how long Apply waits for another process's migration when
// ctx has no deadline.
const lockWait = 60 * time.Second

// createHistory creates the table that records applied files.
const createHistory = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    VARCHAR(255) NOT NULL PRIMARY KEY,
    applied_at DATETIME(6)  NOT NULL
)`

// Apply applies, in order, every embedded migration that schema_migrations
// does not list yet, and records each one as it finishes. Running it again
// applies nothing. It is safe to call from several processes (shop replicas
// starting together) against one database: on MySQL and MariaDB they take
// turns on a named lock (GET_LOCK) for that database; on SQLite they take
// turns on the database's write lock, and all files are applied in one
// transaction.
//
// Apply holds one connection of db while it runs. Errors name the file and
// the statement that failed, and wrap ErrUnsupported for another kind of
// database, ErrLocked when the lock could not be had in time (ctx's deadline,
// or 60 s), or the driver's error.
func Apply(ctx context.Context, db *gorm.DB) error {
	all, err := load()
	if err != nil {
		return err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	switch name := db.Dialector.Name(); name {
	case "mysql":
		return applyMySQL(ctx, sqlDB, all)
	case "sqlite":
		return applySQLite(ctx, sqlDB, all)
	default:
		return fmt.Errorf("%w: %q", ErrUnsupported, name)
	}
}

// Versions lists the embedded migrations, in the order Apply runs them.
func Versions() []string {
	all, err := load()
	if err != nil {
		panic(err) // the embedded files are fixed at build time; the tests load them
	}
	var v []string
	for _, m := range all {
		v = append(v, m.version)
	}
	return v
}
