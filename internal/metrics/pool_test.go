package metrics

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/database"
)

// TestPool: a shop watching its database's pool exports the connections in
// use and the waits for one, read at the scrape.
func TestPool(t *testing.T) {
	db, err := database.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "pool.db"))
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	m := New()
	m.Pool(sqlDB)
	conn, err := sqlDB.Conn(context.Background()) // one checked out
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`go_sql_in_use_connections{db_name="shop"} 1`, `go_sql_wait_count_total{db_name="shop"} 0`} {
		if !strings.Contains(rec.Body.String(), want+"\n") {
			t.Errorf("the scrape has no %s", want)
		}
	}
}
