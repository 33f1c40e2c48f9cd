package stock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// A product that sets a late commit without saying which orders gets the
// default schedule; one that sets neither keeps zeros.
func TestLateCommitDefaults(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		s := stock.NewStore(db.DB())
		late, err := s.Create(context.Background(), stock.Product{ID: "late", Stock: 1, Strategy: strategy.Lua,
			LateCommit: 300 * time.Millisecond})
		if err != nil || late.LateCommitEvery != stock.DefaultLateCommitEvery {
			t.Errorf("late commit without every: %+v, %v; want every %d", late, err, stock.DefaultLateCommitEvery)
		}
		plain, err := s.Create(context.Background(), stock.Product{ID: "plain", Stock: 1, Strategy: strategy.Lua})
		if err != nil || plain.LateCommit != 0 || plain.LateCommitEvery != 0 {
			t.Errorf("no late commit: %+v, %v; want zeros", plain, err)
		}
	})
}

func TestCreateGet(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		ctx := context.Background()
		s := stock.NewStore(db.DB())
		in := stock.Product{
			ID: "phone-1", Name: "Phone", Stock: 100, InitialStock: 7, Strategy: strategy.Redlock,
			LockTTL: 250 * time.Millisecond, Work: 3 * time.Millisecond, Stall: 900 * time.Millisecond, StallRate: 0.05,
			LateCommit: 300 * time.Millisecond, LateCommitEvery: 7,
		}
		created, err := s.Create(ctx, in)
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		want := in
		want.InitialStock = 100 // Create sets it from Stock
		want.CreatedAt = created.CreatedAt
		if created != want {
			t.Errorf("Create returned\n got %+v\nwant %+v", created, want)
		}
		if created.CreatedAt.IsZero() || time.Since(created.CreatedAt) > time.Minute {
			t.Errorf("CreatedAt: got %v, want about now", created.CreatedAt)
		}
		got, err := s.Get(ctx, "phone-1")
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("CreatedAt read back: got %v, want %v", got.CreatedAt, want.CreatedAt)
		}
		got.CreatedAt = want.CreatedAt
		if got != want {
			t.Errorf("Get\n got %+v\nwant %+v", got, want)
		}
	})
}

func TestCreateDefaults(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		got, err := stock.NewStore(db.DB()).Create(context.Background(), stock.Product{ID: "x", Strategy: strategy.Off})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if got.Name != "x" {
			t.Errorf("Name: got %q, want the id %q", got.Name, "x")
		}
		if got.LockTTL != stock.DefaultLockTTL {
			t.Errorf("LockTTL: got %v, want %v", got.LockTTL, stock.DefaultLockTTL)
		}
	})
}

func TestCreateDuplicate(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		ctx := context.Background()
		s := stock.NewStore(db.DB())
		p := stock.Product{ID: "dup", Stock: 1, Strategy: strategy.Lua}
		if _, err := s.Create(ctx, p); err != nil {
			t.Fatalf("first Create: %v", err)
		}
		p.Stock = 99
		if _, err := s.Create(ctx, p); !errors.Is(err, stock.ErrAlreadyExists) {
			t.Fatalf("second Create: got err %v, want %v", err, stock.ErrAlreadyExists)
		}
		got, err := s.Get(ctx, "dup")
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if got.Stock != 1 {
			t.Errorf("stock after rejected duplicate: got %d, want 1", got.Stock)
		}
	})
}

func TestGetErrors(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		ctx := context.Background()
		s := stock.NewStore(db.DB())
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, stock.ErrNotFound) {
			t.Errorf("Get unknown: got err %v, want %v", err, stock.ErrNotFound)
		}
		if _, err := s.Get(ctx, "bad id"); !errors.Is(err, stock.ErrInvalid) {
			t.Errorf("Get malformed id: got err %v, want %v", err, stock.ErrInvalid)
		}
	})
}

func TestDatabaseDown(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s := stock.NewStore(db.DB())
		if _, err := s.Create(ctx, stock.Product{ID: "p", Stock: 1, Strategy: strategy.Lua}); err != nil {
			t.Fatalf("Create: %v", err)
		}

		db.Stop()
		start := time.Now()
		_, err := s.Get(ctx, "p")
		if !errors.Is(err, stock.ErrUnavailable) {
			t.Errorf("Get with the database down: got err %v, want %v", err, stock.ErrUnavailable)
		}
		_, err = s.Create(ctx, stock.Product{ID: "q", Stock: 1, Strategy: strategy.Lua})
		if !errors.Is(err, stock.ErrUnavailable) {
			t.Errorf("Create with the database down: got err %v, want %v", err, stock.ErrUnavailable)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("failing took %v, want it fast", d)
		}

		db.Start()
		if _, err := s.Get(ctx, "p"); err != nil {
			t.Errorf("Get after Start: %v", err)
		}
	})
}
