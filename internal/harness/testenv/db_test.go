package testenv

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/migrations"
)

func TestDBIsMigratedAndPerTest(t *testing.T) {
	DB(t, func(t *testing.T, db *TestDB) {
		ctx := context.Background()
		var n int64
		if err := db.DB().WithContext(ctx).Raw("SELECT COUNT(*) FROM schema_migrations").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if got, want := n, int64(len(migrations.Versions())); got != want {
			t.Errorf("applied migrations: got %d, want %d", got, want)
		}
		insert := "INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at) VALUES (?, ?, ?, ?, ?, ?)"
		if err := db.DB().Exec(insert, "o1", "u", "p", 1, "off", time.Now()).Error; err != nil {
			t.Fatal(err)
		}
		t.Run("other", func(t *testing.T) {
			other := NewDB(t, db.Mode())
			var n int64
			if err := other.DB().Raw("SELECT COUNT(*) FROM orders").Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("another test's database has %d orders, want 0", n)
			}
		})
	})
}

func TestDBStopStart(t *testing.T) {
	DB(t, func(t *testing.T, db *TestDB) {
		ctx := context.Background()
		ping := func() error {
			var one int
			return db.DB().WithContext(ctx).Raw("SELECT 1").Scan(&one).Error
		}
		if err := ping(); err != nil {
			t.Fatalf("before Stop: %v", err)
		}
		db.Stop()
		start := time.Now()
		err := ping()
		if err == nil {
			t.Fatalf("query while stopped: got nil, want an error")
		}
		// Code under test classifies outages with stock.IsConnError; the
		// injected fault must pass it, as a dead server does. Which error
		// comes is a race, as it is with a real one: a pooled connection
		// that saw the cut before the query is dropped and a new dial is
		// refused (ECONNREFUSED); one that saw it only after sending gets
		// the reset (the driver's "invalid connection").
		if !stock.IsConnError(err) {
			t.Errorf("query while stopped: got %v, want a connection error", err)
		}
		if db.Mode() == Embedded && !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("query while stopped: got %v, want an error wrapping ECONNREFUSED", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("query while stopped failed after %v, want fast", took)
		}
		db.Start()
		if err := ping(); err != nil {
			t.Fatalf("after Start: %v", err)
		}
	})
}

// TestDBStopFailsOpenTransaction checks that a transaction begun before the
// fault cannot commit during it, and leaves nothing behind.
func TestDBStopFailsOpenTransaction(t *testing.T) {
	DB(t, func(t *testing.T, db *TestDB) {
		tx := db.DB().Begin()
		if tx.Error != nil {
			t.Fatal(tx.Error)
		}
		insert := "INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at) VALUES (?, ?, ?, ?, ?, ?)"
		if err := tx.Exec(insert, "o1", "u", "p", 1, "off", time.Now()).Error; err != nil {
			t.Fatal(err)
		}
		db.Stop()
		if err := tx.Commit().Error; err == nil {
			t.Errorf("commit while stopped: got nil, want an error")
		}
		db.Start()
		var n int64
		if err := db.DB().Raw("SELECT COUNT(*) FROM orders").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("orders after a failed commit: got %d, want 0", n)
		}
	})
}

// TestCommitFault checks that a COMMIT whose answer is lost landed all the
// same, and that with stop the database is down until Start.
func TestCommitFault(t *testing.T) {
	DB(t, func(t *testing.T, db *TestDB) {
		for _, stop := range []bool{false, true} {
			pool, f := db.OpenPool(t)
			id := "lost-" + randomID(4)
			f.LoseNextAnswer(stop)
			insert := "INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at) VALUES (?, ?, ?, ?, ?, ?)"
			err := pool.Transaction(func(tx *gorm.DB) error {
				return tx.Exec(insert, id, "u", "p", 1, "off", time.Now()).Error
			})
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("stop=%v: commit: got %v, want an error wrapping ECONNRESET", stop, err)
			}
			if got := f.Lost(); got != 1 {
				t.Errorf("stop=%v: answers lost: got %d, want 1", stop, got)
			}
			var n int64
			err = pool.Raw("SELECT COUNT(*) FROM orders WHERE id = ?", id).Scan(&n).Error
			if stop && !stock.IsConnError(err) {
				t.Errorf("stop=%v: query after the commit: got %v, want a connection error", stop, err)
			}
			db.Start()
			if err := db.DB().Raw("SELECT COUNT(*) FROM orders WHERE id = ?", id).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("stop=%v: rows of the commit whose answer was lost: got %d, want 1", stop, n)
			}
		}
	})
}
