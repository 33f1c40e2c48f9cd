package database_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

const insertProduct = `INSERT INTO products (id, name, stock, initial_stock, strategy, lock_ttl_ms, work_ms, stall_ms, stall_rate, created_at)
VALUES (?, ?, ?, ?, 'off', 1000, 0, 0, 0, ?)`

const insertOrder = `INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at) VALUES (?, ?, ?, 1, 'off', ?)`

// buy is the shape of the shop's write path: a plain read, then the
// UPDATE and the INSERT in one transaction. Half the buyers read inside
// the transaction instead, which on SQLite is the case that fails with
// SQLITE_BUSY unless transactions take the write lock at BEGIN.
func buy(ctx context.Context, db *gorm.DB, product, user string, readInside bool) error {
	readStock := func(db *gorm.DB) (int, error) {
		var stock int
		err := db.WithContext(ctx).Raw("SELECT stock FROM products WHERE id = ?", product).Scan(&stock).Error
		return stock, err
	}
	var stock int
	var err error
	if !readInside {
		if stock, err = readStock(db); err != nil {
			return err
		}
	}
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if readInside {
			if stock, err = readStock(tx); err != nil {
				return err
			}
		}
		if err := tx.Exec("UPDATE products SET stock = ? WHERE id = ?", stock-1, product).Error; err != nil {
			return err
		}
		return tx.Exec(insertOrder, user, user, product, time.Now()).Error
	})
}

// TestConcurrentWriters has three "shop instances" (groups of goroutines
// sharing one *gorm.DB, as the in-process shops do) write orders at once.
// Every transaction must succeed: on SQLite none may fail with SQLITE_BUSY.
func TestConcurrentWriters(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		ctx := context.Background()
		db := tdb.DB()
		if err := db.Exec(insertProduct, "p", "hot", 10000, 10000, time.Now()).Error; err != nil {
			t.Fatal(err)
		}
		const shops, buyers = 3, 64
		var ok atomic.Int64
		errs := make(chan error, shops*buyers)
		var wg sync.WaitGroup
		for s := 0; s < shops; s++ {
			for b := 0; b < buyers; b++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					user := fmt.Sprintf("s%d-b%02d", s, b)
					if err := buy(ctx, db, "p", user, b%2 == 0); err != nil {
						errs <- fmt.Errorf("%s: %w", user, err)
						return
					}
					ok.Add(1)
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var orders int64
		if err := db.Raw("SELECT COUNT(*) FROM orders").Scan(&orders).Error; err != nil {
			t.Fatal(err)
		}
		if got, want := orders, ok.Load(); got != want {
			t.Errorf("orders: got %d, want %d (one per successful buyer)", got, want)
		}
		if got, want := ok.Load(), int64(shops*buyers); got != want {
			t.Errorf("successful buyers: got %d, want %d", got, want)
		}
	})
}

// TestConcurrentProcessesSQLite is TestConcurrentWriters with three
// separate pools on one SQLite file, as three processes would have.
func TestConcurrentProcessesSQLite(t *testing.T) {
	ctx := context.Background()
	tdb := testenv.NewDB(t, testenv.Embedded)
	if err := tdb.DB().Exec(insertProduct, "p", "hot", 10000, 10000, time.Now()).Error; err != nil {
		t.Fatal(err)
	}
	var dbs []*gorm.DB
	for i := 0; i < 3; i++ {
		db, err := database.OpenSQLite(ctx, tdb.Path())
		if err != nil {
			t.Fatal(err)
		}
		sqlDB, _ := db.DB()
		t.Cleanup(func() { sqlDB.Close() })
		dbs = append(dbs, db)
	}
	errs := make(chan error, 3*32)
	var wg sync.WaitGroup
	for s, db := range dbs {
		for b := 0; b < 32; b++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := buy(ctx, db, "p", fmt.Sprintf("s%d-b%02d", s, b), b%2 == 0); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestDuplicateKeyIsTranslated(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		db := tdb.DB()
		if err := db.Exec(insertProduct, "p", "x", 1, 1, time.Now()).Error; err != nil {
			t.Fatal(err)
		}
		err := db.Exec(insertProduct, "p", "x", 1, 1, time.Now()).Error
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			t.Fatalf("second insert: got %v, want gorm.ErrDuplicatedKey", err)
		}
	})
}

// TestTimeRoundTrip checks that DATETIME(6) columns scan into time.Time and
// keep microseconds on both backends.
func TestTimeRoundTrip(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		db := tdb.DB()
		want := time.Date(2024, 11, 11, 0, 0, 1, 123456000, time.UTC)
		if err := db.Exec(insertProduct, "p", "双11 特价", 1, 1, want).Error; err != nil {
			t.Fatal(err)
		}
		var row struct {
			Name      string
			CreatedAt time.Time
		}
		if err := db.Raw("SELECT name, created_at FROM products WHERE id = ?", "p").Scan(&row).Error; err != nil {
			t.Fatal(err)
		}
		if !row.CreatedAt.Equal(want) {
			t.Errorf("created_at: got %v, want %v", row.CreatedAt, want)
		}
		if got, want := row.Name, "双11 特价"; got != want {
			t.Errorf("name: got %q, want %q", got, want)
		}
		if now := db.NowFunc(); now.Location() != time.UTC {
			t.Errorf("NowFunc location: got %v, want UTC", now.Location())
		}
	})
}

func TestPoolSize(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		sqlDB, err := tdb.DB().DB()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sqlDB.Stats().MaxOpenConnections, 8; tdb.Mode() == testenv.Embedded && got != want {
			t.Errorf("sqlite max open connections: got %d, want %d", got, want)
		}
		if tdb.Mode() != testenv.Real {
			return
		}
		// The production default, on a pool of our own.
		db, err := database.OpenMySQL(context.Background(), tdb.DirectDSN())
		if err != nil {
			t.Fatal(err)
		}
		own, _ := db.DB()
		defer own.Close()
		if got, want := own.Stats().MaxOpenConnections, 64; got != want {
			t.Errorf("mysql max open connections: got %d, want %d", got, want)
		}
	})
}
