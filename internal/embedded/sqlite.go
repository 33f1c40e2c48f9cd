package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/database"
)

// SQLite is a SQLite database in a file of its own fresh temporary
// directory, opened with database.OpenSQLite. The database starts empty:
// apply the schema with migrations.Apply.
//
// DB is safe for concurrent use. The caller must call Close when done, which
// closes DB and removes the directory with the file.
type SQLite struct {
	// DB is the open database.
	DB *gorm.DB
	// Path is the database file, for logs and for tools such as sqlite3.
	Path string

	dir string
}

// OpenSQLite creates a fresh temporary directory, opens a SQLite database
// file in it and pings it within ctx. Errors come from os.MkdirTemp or
// database.OpenSQLite, which gets opts; on error nothing is left behind.
func OpenSQLite(ctx context.Context, opts ...database.Option) (*SQLite, error) {
	dir, err := os.MkdirTemp("", "flashsale-sqlite-")
	if err != nil {
		return nil, fmt.Errorf("embedded: sqlite temp dir: %w", err)
	}
	path := filepath.Join(dir, "flashsale.db")
	db, err := database.OpenSQLite(ctx, path, opts...)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("embedded: %w", err)
	}
	return &SQLite{DB: db, Path: path, dir: dir}, nil
}

// Close closes the database and removes its directory. It is not safe to
// call concurrently with itself; calling it again returns nil.
func (s *SQLite) Close() error {
	if s.dir == "" {
		return nil
	}
	var errs []error
	if sqlDB, err := s.DB.DB(); err == nil {
		errs = append(errs, sqlDB.Close())
	}
	errs = append(errs, os.RemoveAll(s.dir))
	s.dir = ""
	return errors.Join(errs...)
}
