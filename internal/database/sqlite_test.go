package database_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/flashsale/flashsale/internal/database"
)

func TestOpenSQLiteRejectsMemory(t *testing.T) {
	for _, path := range []string{"", ":memory:", "x.db?mode=memory"} {
		if _, err := database.OpenSQLite(context.Background(), path); !errors.Is(err, database.ErrInvalidDSN) {
			t.Errorf("OpenSQLite(%q): got %v, want ErrInvalidDSN", path, err)
		}
	}
}

func TestOpenSQLiteSettings(t *testing.T) {
	db, err := database.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	var mode string
	if err := db.Raw("PRAGMA journal_mode").Scan(&mode).Error; err != nil {
		t.Fatal(err)
	}
	if got, want := mode, "wal"; got != want {
		t.Errorf("journal_mode: got %q, want %q", got, want)
	}
	var busy int
	if err := db.Raw("PRAGMA busy_timeout").Scan(&busy).Error; err != nil {
		t.Fatal(err)
	}
	if busy < 1000 {
		t.Errorf("busy_timeout: got %d ms, want at least 1000", busy)
	}
}
