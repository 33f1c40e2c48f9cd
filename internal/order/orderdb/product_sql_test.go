package orderdb

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestInsertAndTake: a sale takes its units from the row it names and no
// other, refuses a quantity above what that row holds, and refuses a
// second order by the same buyer, leaving the stock as it was.
func TestInsertAndTake(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		ctx := context.Background()
		t.Run("product row", func(t *testing.T) {
			s := newShelf(t, db, 0)
			if err := s.sell(ctx, s.order("u1", 3), nil); err != nil {
				t.Fatal(err)
			}
			if got, want := s.left(t), 7; got != want {
				t.Errorf("stock left: got %d, want %d", got, want)
			}
			if err := s.sell(ctx, s.order("u2", 8), nil); !errors.Is(err, ErrNoUnits) {
				t.Errorf("8 units out of 7: %v, want ErrNoUnits", err)
			}
			if err := s.sell(ctx, s.order("u1", 1), nil); !errors.Is(err, ErrDuplicateKey) {
				t.Errorf("a second order by u1: %v, want ErrDuplicateKey", err)
			}
			if err := s.sell(ctx, s.order("u2", 7), nil); err != nil {
				t.Errorf("the last 7 units: %v", err)
			}
			if got, want := s.left(t), 0; got != want {
				t.Errorf("stock left: got %d, want %d", got, want)
			}
		})
		t.Run("bucket row", func(t *testing.T) {
			s := newShelf(t, db, 4)
			before, err := stock.Buckets(ctx, db.DB(), s.p.ID)
			if err != nil {
				t.Fatal(err)
			}
			o := s.order("u1", 1)
			if err := s.sell(ctx, o, nil); err != nil {
				t.Fatal(err)
			}
			after, err := stock.Buckets(ctx, db.DB(), s.p.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(before)
			want[s.bucket]--
			if !slices.Equal(after, want) {
				t.Errorf("buckets: got %v, want %v (one unit from bucket %d only)", after, want, s.bucket)
			}
			var row Row
			if err := db.DB().Where("id = ?", o.ID).Take(&row).Error; err != nil {
				t.Fatal(err)
			}
			if row.Bucket == nil || *row.Bucket != s.bucket || row.UniqueBuyer == nil || *row.UniqueBuyer != 1 {
				t.Errorf("order row: bucket %v, unique_buyer %v, want %d and 1", row.Bucket, row.UniqueBuyer, s.bucket)
			}
			if err := s.sell(ctx, s.order("u2", before[s.bucket]), nil); !errors.Is(err, ErrNoUnits) {
				t.Errorf("%d units out of bucket %d's %d: %v, want ErrNoUnits", before[s.bucket], s.bucket, before[s.bucket]-1, err)
			}
		})
	})
}

// TestCommitRollsBackOnLostLock: a lock lost (or a buyer gone) after the
// statements ran rolls the transaction back: nothing is written, and the
// error is the context's, not a COMMIT in doubt.
func TestCommitRollsBackOnLostLock(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		s := newShelf(t, db, 0)
		ctx, cancel := context.WithCancelCause(context.Background())
		o := s.order("u1", 1)
		err := s.sell(ctx, o, func() { cancel(dlock.ErrNotHeld) })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Commit: %v, want context.Canceled", err)
		}
		if ce := (*commitError)(nil); errors.As(err, &ce) {
			t.Errorf("Commit: %v is a *commitError, but no COMMIT was sent", err)
		}
		if s.landed(t, o) {
			t.Error("the order of a transaction whose lock was lost is in the database")
		}
		if got, want := s.left(t), 10; got != want {
			t.Errorf("stock left: got %d, want %d", got, want)
		}
	})
}

// TestCommitLateProduct: a product with the late-commit fault on commits
// on the database the Writer's late function returns for it; any other
// product on the Writer's own.
func TestCommitLateProduct(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		s := newShelf(t, db, 0)
		var calls atomic.Int32
		w := NewWriter(db.DB(), func(_ *dlock.Lock, p stock.Product) *gorm.DB {
			calls.Add(1)
			return db.DB()
		})
		noop := func(tx *gorm.DB) error { return TakeRow(tx, s.p.ID) }
		if err := w.Commit(context.Background(), nil, s.p, noop); err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != 0 {
			t.Errorf("late called %d times for a product without LateCommit, want 0", got)
		}
		late := s.p
		late.LateCommit = 1
		if err := w.Commit(context.Background(), nil, late, noop); err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != 1 {
			t.Errorf("late called %d times for a product with LateCommit, want 1", got)
		}
	})
}

// TestDuplicateNamesTheOrder: the error for a buyer who bought already
// names the order, so that a retry after ErrInDoubt learns which it got.
func TestDuplicateNamesTheOrder(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		s := newShelf(t, db, 0)
		o := s.order("u1", 1)
		if err := s.sell(context.Background(), o, nil); err != nil {
			t.Fatal(err)
		}
		err := s.w.Duplicate(context.Background(), s.p.ID, "u1")
		var de *DuplicateOrderError
		if !errors.As(err, &de) || !errors.Is(err, ErrDuplicateOrder) {
			t.Fatalf("Duplicate: %v, want a *DuplicateOrderError wrapping ErrDuplicateOrder", err)
		}
		if de.OrderID != o.ID || de.UserID != "u1" || de.ProductID != s.p.ID {
			t.Errorf("Duplicate: %+v, want order %s of u1 for %s", de, o.ID, s.p.ID)
		}
	})
}

// TestReadStockUnknownProduct: a product the database does not have is
// stock.ErrNotFound, not a zero stock.
func TestReadStockUnknownProduct(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		if n, err := ReadStock(context.Background(), db.DB(), "no-such-product"); !errors.Is(err, stock.ErrNotFound) {
			t.Errorf("ReadStock: %d, %v, want stock.ErrNotFound", n, err)
		}
	})
}
