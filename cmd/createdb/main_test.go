package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestCreatesOnceAndAgain: the database is there afterwards, and a second
// run, as .ci/run makes on a machine that has it, succeeds too.
func TestCreatesOnceAndAgain(t *testing.T) {
	dsn := os.Getenv("FLASHSALE_TEST_MYSQL_DSN")
	if dsn == "" {
		t.Skip("FLASHSALE_TEST_MYSQL_DSN is not set: no MySQL/MariaDB to create a database on")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = ""
	server := cfg.FormatDSN()
	name := fmt.Sprintf("flashsale_createdb_%d", time.Now().UnixNano())
	db, err := sql.Open("mysql", server)
	if err != nil {
		t.Fatal(err)
	}
	// The drop runs before the close: a deferred Close would run first,
	// and the database would stay on the server.
	t.Cleanup(func() {
		if _, err := db.Exec("DROP DATABASE IF EXISTS `" + name + "`"); err != nil {
			t.Errorf("drop the test's database %s: %v", name, err)
		}
		db.Close()
	})
	for range 2 {
		if err := run(t.Context(), []string{server, name}); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.QueryRow("SELECT schema_name FROM information_schema.schemata WHERE schema_name = ?", name).Scan(&got); err != nil {
			t.Fatalf("database %s after run: %v", name, err)
		}
	}
}

// TestRefuses: a wrong command line or a name that would need quoting is
// refused before any server is asked.
func TestRefuses(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"root@tcp(127.0.0.1:1)/"},
		{"root@tcp(127.0.0.1:1)/", "a`b"},
		{"root@tcp(127.0.0.1:1)/", "drop table x"},
		{"root@tcp(127.0.0.1:1)/", strings.Repeat("a", 65)},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // a run that asked a server would fail with "not answering"
		err := run(ctx, args)
		if err == nil || strings.Contains(err.Error(), "not answering") {
			t.Errorf("run(%q) = %v, want a refusal", args, err)
		}
	}
}

// TestGivesUpOnASilentServer: with nothing listening, run returns once its
// context ends, saying the server did not answer.
func TestGivesUpOnASilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // a port nothing listens on
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	err = run(ctx, []string{"root@tcp(" + addr + ")/?timeout=200ms", "flashsale_never"})
	if err == nil || !strings.Contains(err.Error(), "server not answering") {
		t.Fatalf("run = %v, want server not answering", err)
	}
}
