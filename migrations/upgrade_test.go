package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/migrations"
)

// TestUpgradeOldSchemaWithData: a database of the previous release
// (0001-0003) with products and orders, including duplicate orders of mode
// off, upgrades in place.
func TestUpgradeOldSchemaWithData(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		ctx := context.Background()
		db := tdb.DB()
		for _, s := range []string{"DROP TABLE orders", "DROP TABLE products", "DROP TABLE shops", "DROP TABLE redis_owed", "DROP TABLE schema_migrations"} {
			if err := db.Exec(s).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := migrations.ApplyFirst(ctx, db, 3); err != nil {
			t.Fatalf("old schema: %v", err)
		}
		now := time.Now().UTC()
		for _, s := range []struct {
			q    string
			args []any
		}{
			{"INSERT INTO products (id, name, stock, initial_stock, lock_mode, lock_ttl_ms, work_ms, stall_ms, stall_rate, created_at) VALUES ('old', 'old', 5, 10, 'off', 100, 0, 0, 0, ?)", []any{now}},
			{"INSERT INTO orders (id, user_id, product_id, quantity, lock_mode, created_at) VALUES ('00000000-0000-0000-0000-000000000001', 'u', 'old', 1, 'off', ?)", []any{now}},
			{"INSERT INTO orders (id, user_id, product_id, quantity, lock_mode, created_at) VALUES ('00000000-0000-0000-0000-000000000002', 'u', 'old', 1, 'off', ?)", []any{now}},
		} {
			if err := db.Exec(s.q, s.args...).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := migrations.Apply(ctx, db); err != nil {
			t.Fatalf("upgrade: %v", err)
		}
		var strat string
		var fence, late, every int64
		if err := db.Raw("SELECT strategy, fence, late_commit_ms, late_commit_every FROM products WHERE id='old'").Row().Scan(&strat, &fence, &late, &every); err != nil {
			t.Fatal(err)
		}
		var n, nullUB int64
		db.Raw("SELECT COUNT(*), SUM(CASE WHEN unique_buyer IS NULL THEN 1 ELSE 0 END) FROM orders WHERE strategy='off'").Row().Scan(&n, &nullUB)
		t.Logf("upgraded: strategy %q fence %d late %d/%d; %d old orders, %d with unique_buyer NULL", strat, fence, late, every, n, nullUB)
		if strat != "off" || fence != 0 || n != 2 || nullUB != 2 {
			t.Errorf("upgrade lost data")
		}
	})
}
