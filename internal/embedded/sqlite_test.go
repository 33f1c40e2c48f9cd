package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flashsale/flashsale/internal/embedded"
)

func TestOpenSQLite(t *testing.T) {
	s, err := embedded.OpenSQLite(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DB.Exec("CREATE TABLE t (x INT)").Error; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path); err != nil {
		t.Fatalf("database file: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(s.Path)); !os.IsNotExist(err) {
		t.Errorf("temp dir after Close: got %v, want it removed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: got %v, want nil", err)
	}
}
