package migrations_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/migrations"
)

func countApplied(t *testing.T, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT COUNT(*) FROM schema_migrations").Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestApplyTwice: testenv already applied everything; again is a no-op.
func TestApplyTwice(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		if err := migrations.Apply(context.Background(), tdb.DB()); err != nil {
			t.Fatalf("second Apply: %v", err)
		}
		if got, want := countApplied(t, tdb.DB()), int64(len(migrations.Versions())); got != want {
			t.Errorf("recorded migrations: got %d, want %d", got, want)
		}
	})
}

// TestApplyConcurrentReplicas starts three "replicas", each with its own
// pool, on an empty database at once: all must succeed, and every file must
// run exactly once.
func TestApplyConcurrentReplicas(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, table := range []string{"orders", "products", "shops", "redis_owed", "schema_migrations"} {
			if err := tdb.DB().Exec("DROP TABLE " + table).Error; err != nil {
				t.Fatal(err)
			}
		}
		var replicas []*gorm.DB
		for i := 0; i < 3; i++ {
			var db *gorm.DB
			var err error
			if tdb.Mode() == testenv.Real {
				db, err = database.OpenMySQL(ctx, tdb.DSN())
			} else {
				db, err = database.OpenSQLite(ctx, tdb.Path())
			}
			if err != nil {
				t.Fatal(err)
			}
			sqlDB, _ := db.DB()
			t.Cleanup(func() { sqlDB.Close() })
			replicas = append(replicas, db)
		}
		errs := make(chan error, len(replicas))
		var wg sync.WaitGroup
		for _, db := range replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- migrations.Apply(ctx, db)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Apply: %v", err)
			}
		}
		if got, want := countApplied(t, tdb.DB()), int64(len(migrations.Versions())); got != want {
			t.Errorf("recorded migrations: got %d, want %d", got, want)
		}
	})
}

// TestDuplicateOrdersAreAllowed pins the lesson: the schema must not stop a
// user from having two orders for one product where the locks are meant to
// (unique_buyer NULL); only where the database is (unique_buyer 1, the
// lock-free strategies) does the second INSERT fail.
func TestDuplicateOrdersAreAllowed(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		insert := "INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at, unique_buyer) VALUES (?, 'u1', 'p1', 1, 'off', ?, ?)"
		for _, id := range []string{"00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"} {
			if err := tdb.DB().Exec(insert, id, time.Now(), nil).Error; err != nil {
				t.Fatalf("order %s: %v", id, err)
			}
		}
		if err := tdb.DB().Exec(insert, "00000000-0000-0000-0000-000000000003", time.Now(), 1).Error; err != nil {
			t.Fatalf("first order with unique_buyer: %v", err)
		}
		if err := tdb.DB().Exec(insert, "00000000-0000-0000-0000-000000000004", time.Now(), 1).Error; err == nil {
			t.Errorf("second order with unique_buyer: got nil, want a unique-key error")
		}
	})
}

func TestColumnsAreNotNull(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		err := tdb.DB().Exec(`INSERT INTO products (id, name, stock, initial_stock, strategy, lock_ttl_ms, work_ms, stall_ms, stall_rate, created_at)
VALUES ('p', NULL, 1, 1, 'off', 1, 0, 0, 0, ?)`, time.Now()).Error
		if err == nil {
			t.Errorf("product with a NULL name: got nil, want an error")
		}
	})
}

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := database.OpenSQLite(ctx, filepath.Join(dir, "shop.db"))
	if err != nil {
		panic(err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	if err := migrations.Apply(ctx, db); err != nil { // applies what is pending
		panic(err)
	}
	if err := migrations.Apply(ctx, db); err != nil { // nothing to do: harmless
		panic(err)
	}
	fmt.Println(migrations.Versions())
	// Output: [0001_products 0002_orders 0003_orders_product_user 0004_products_strategy 0005_orders_strategy 0006_products_fence 0007_products_late_commit_ms 0008_products_late_commit_every 0009_orders_unique_buyer 0010_orders_unique_buyer_index 0011_products_batch_max 0012_shops 0013_ids_bytewise.mysql 0014_products_fence_epoch 0015_shops_redis_master 0016_reclaimed 0017_reclaimed_bytewise.mysql 0018_products_reclaims 0019_products_version 0020_stock_buckets 0021_stock_buckets_bytewise.mysql 0022_shops_zookeeper 0023_place_one_trip.mysql 0025_products_pay_within 0026_orders_state 0027_orders_deadline 0028_orders_due 0029_place_one_trip_pending.mysql 0030_redis_owed 0031_redis_owed_bytewise.mysql 0032_redis_owed_paid]
}
