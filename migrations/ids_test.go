package migrations_test

import (
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Ids compare as bytes on every database: 'Alice' and 'alice' are two
// buyers to orders' unique key, to a COUNT and to a GROUP BY, as they are to
// Redis and Go; and the unique key still refuses a true repeat.
func TestIdsAreCaseSensitive(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		db := tdb.DB()
		insert := "INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at, unique_buyer) VALUES (?, ?, 'p1', 1, 'sql-atomic', ?, 1)"
		for id, user := range map[string]string{"00000000-0000-0000-0000-000000000001": "Alice", "00000000-0000-0000-0000-000000000002": "alice"} {
			if err := db.Exec(insert, id, user, time.Now()).Error; err != nil {
				t.Fatalf("order for %s under orders_unique_buyer: %v", user, err)
			}
		}
		if err := db.Exec(insert, "00000000-0000-0000-0000-000000000009", "alice", time.Now()).Error; err == nil {
			t.Errorf("a second order for alice with unique_buyer: got nil, want a unique-key error")
		}
		var n int64
		if err := db.Raw("SELECT COUNT(*) FROM orders WHERE product_id = 'p1' AND user_id = 'alice'").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("orders WHERE user_id = 'alice': got %d, want 1", n)
		}
		var groups []struct {
			UserID string
			N      int64
		}
		if err := db.Raw("SELECT user_id, COUNT(*) AS n FROM orders WHERE product_id = 'p1' GROUP BY user_id ORDER BY user_id").Scan(&groups).Error; err != nil {
			t.Fatal(err)
		}
		if len(groups) != 2 || groups[0].UserID != "Alice" || groups[1].UserID != "alice" || groups[0].N != 1 || groups[1].N != 1 {
			t.Errorf("GROUP BY user_id: got %+v, want Alice and alice, one order each", groups)
		}
		for _, id := range []string{"Phone", "phone"} {
			err := db.Exec("INSERT INTO products (id, name, stock, initial_stock, strategy, lock_ttl_ms, work_ms, stall_ms, stall_rate, created_at) VALUES (?, 'x', 1, 1, 'off', 1, 0, 0, 0, ?)", id, time.Now()).Error
			if err != nil {
				t.Errorf("product %s: %v", id, err)
			}
		}
	})
}

// On MySQL and MariaDB every id column is utf8mb4_bin, and the keys on
// them survived the change.
func TestIdColumnsAreBinary(t *testing.T) {
	if len(testenv.DBModes(t)) < 2 {
		t.Skipf("needs %s: SQLite has no collations to check", testenv.EnvMySQLDSN)
	}
	db := testenv.NewDB(t, testenv.Real).DB()
	for _, col := range [][2]string{{"products", "id"}, {"orders", "id"}, {"orders", "user_id"}, {"orders", "product_id"}, {"shops", "id"}, {"reclaimed", "id"}, {"reclaimed", "product_id"}} {
		var collation string
		err := db.Raw("SELECT collation_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ?", col[0], col[1]).Scan(&collation).Error
		if err != nil {
			t.Fatal(err)
		}
		if collation != "utf8mb4_bin" {
			t.Errorf("%s.%s: collation %q, want utf8mb4_bin", col[0], col[1], collation)
		}
	}
	for _, key := range []struct {
		table, index string
		unique       bool
	}{
		{"products", "PRIMARY", true}, {"orders", "PRIMARY", true}, {"shops", "PRIMARY", true},
		{"orders", "orders_product_user", false}, {"orders", "orders_unique_buyer", true},
	} {
		var nonUnique []int
		err := db.Raw("SELECT non_unique FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?", key.table, key.index).Scan(&nonUnique).Error
		if err != nil {
			t.Fatal(err)
		}
		if len(nonUnique) == 0 || (nonUnique[0] == 0) != key.unique {
			t.Errorf("%s.%s: non_unique %v, want an index, unique %v", key.table, key.index, nonUnique, key.unique)
		}
	}
}
