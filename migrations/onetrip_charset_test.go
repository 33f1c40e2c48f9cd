package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/migrations"
)

// TestOneTripNonLatinBuyerInLatin1Database: a database created without a
// character set (docs/real-backends.md) takes the server's default, latin1
// on upstream MariaDB before 11.6. The tables' id columns are utf8mb4 all
// the same (0013), so sql-atomic sells to buyer "日本"; place_one_trip's
// parameters take the database's default, and refuse it (1366), or, with
// a non-strict sql_mode, stored "??" (two such buyers collided): they are
// utf8mb4 since 0029.
func TestOneTripNonLatinBuyerInLatin1Database(t *testing.T) {
	dsn := os.Getenv("FLASHSALE_TEST_MYSQL_DSN")
	if dsn == "" {
		t.Skip("FLASHSALE_TEST_MYSQL_DSN not set")
	}
	ctx := context.Background()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("flashsale_test_latin1_%d", os.Getpid())
	admin := *cfg
	admin.DBName = ""
	adb, err := sql.Open("mysql", admin.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer adb.Close()
	if _, err := adb.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET latin1"); err != nil {
		t.Fatal(err)
	}
	defer adb.ExecContext(ctx, "DROP DATABASE `"+name+"`")
	cfg.DBName = name
	db, err := database.OpenMySQL(ctx, cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	if err := migrations.Apply(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("INSERT INTO products (id,name,stock,initial_stock,strategy,lock_ttl_ms,work_ms,stall_ms,stall_rate,created_at) VALUES ('p','p',5,5,'sql-one-trip',0,0,0,0,?)", time.Now()).Error; err != nil {
		t.Fatal(err)
	}
	var outcome string
	var left *int
	err = db.Raw("CALL place_one_trip(?, ?, ?, ?, ?, ?, ?)", "00000000-0000-0000-0000-000000000001", "日本", "p", 1, "sql-one-trip", time.Now(), 0).Row().Scan(&outcome, &left)
	if err != nil || outcome != "placed" {
		t.Errorf("buyer 日本 in a latin1 database: got %q, %v; want placed", outcome, err)
	}
}
