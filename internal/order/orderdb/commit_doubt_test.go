package orderdb

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// shelf is one test's product and a Writer on a pool whose COMMITs can
// lose their answers.
type shelf struct {
	db     *testenv.TestDB
	w      *Writer
	fault  *testenv.CommitFault
	p      stock.Product
	bucket int // NoBucket, or the bucket row every sale takes from
}

// newShelf creates a sql-atomic product of 10 units; with buckets >= 2 its
// stock lies in bucket rows, and every sale takes from the last one.
func newShelf(t *testing.T, db *testenv.TestDB, buckets int) shelf {
	t.Helper()
	pool, fault := db.OpenPool(t)
	p, err := stock.NewStore(db.DB()).Create(context.Background(),
		stock.Product{ID: "p-" + uuid.NewString()[:8], Strategy: strategy.SQLAtomic, Stock: 10, Buckets: buckets})
	if err != nil {
		t.Fatal(err)
	}
	s := shelf{db: db, w: NewWriter(pool, nil), fault: fault, p: p, bucket: NoBucket}
	if buckets >= 2 {
		s.bucket = buckets - 1
	}
	return s
}

// order is a new order of q units by user.
func (s shelf) order(user string, q int) Order {
	o := Order{ID: uuid.NewString(), UserID: user, ProductID: s.p.ID, Quantity: q, Strategy: s.p.Strategy,
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	if s.bucket != NoBucket {
		b := s.bucket
		o.Bucket = &b
	}
	return o
}

// sell writes o the way sql-atomic does; after, if not nil, runs as the
// transaction's last statement.
func (s shelf) sell(ctx context.Context, o Order, after func()) error {
	return s.w.Commit(ctx, nil, s.p, func(tx *gorm.DB) error {
		if err := InsertAndTake(tx, o, s.bucket); err != nil {
			return err
		}
		if after != nil {
			after()
		}
		return nil
	})
}

// left is the stock left in the row the shelf's sales take from.
func (s shelf) left(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	if s.bucket == NoBucket {
		n, err := ReadStock(ctx, s.db.DB(), s.p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	bs, err := stock.Buckets(ctx, s.db.DB(), s.p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return bs[s.bucket]
}

// landed says whether o's row is in the database, once the fault has let
// every COMMIT it holds back land.
func (s shelf) landed(t *testing.T, o Order) bool {
	t.Helper()
	s.fault.Wait()
	found, err := s.w.Landed(context.Background(), o.ID)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// wantCommitError fails t unless err is a COMMIT whose answer was lost.
func wantCommitError(t *testing.T, err error) {
	t.Helper()
	if ce := (*commitError)(nil); !errors.As(err, &ce) {
		t.Fatalf("Commit: %v, want a *commitError (the COMMIT was sent, its answer lost)", err)
	}
}

// TestAfterFailureSettles covers every answer AfterFailure gives about an
// order whose COMMIT was sent and whose answer was lost, on the product's
// row and on a bucket row (where the sale writes no product row that
// Settled could wait on).
func TestAfterFailureSettles(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		for _, layout := range []struct {
			name    string
			buckets int
		}{{"product row", 0}, {"bucket row", 4}} {
			t.Run(layout.name, func(t *testing.T) {
				testAfterFailureSettles(t, db, layout.buckets)
			})
		}
	})
}

func testAfterFailureSettles(t *testing.T, db *testenv.TestDB, buckets int) {
	ctx := context.Background()

	t.Run("landed, answer lost", func(t *testing.T) {
		s := newShelf(t, db, buckets)
		before := s.left(t)
		o := s.order("u1", 1)
		s.fault.LoseNextAnswer(false)
		err := s.sell(ctx, o, nil)
		wantCommitError(t, err)
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("Commit: %v, want it to wrap the driver's ECONNRESET", err)
		}
		if got := s.w.AfterFailure(ctx, o, err); got != nil {
			t.Errorf("AfterFailure: %v, want nil: the order landed and is the buyer's", got)
		}
		if got, want := s.left(t), before-1; got != want {
			t.Errorf("stock left: got %d, want %d", got, want)
		}
	})

	t.Run("landing while asked", func(t *testing.T) {
		// The COMMIT fails at once and lands later, holding the row it
		// wrote until then: Settled must wait for it, where a plain read
		// would answer "not there" about an order that is about to be.
		s := newShelf(t, db, buckets)
		o := s.order("u1", 1)
		s.fault.LoseNextAnswerEarly(500 * time.Millisecond)
		err := s.sell(ctx, o, nil)
		wantCommitError(t, err)
		if got := s.w.AfterFailure(ctx, o, err); got != nil {
			t.Errorf("AfterFailure: %v, want nil: the COMMIT on its way landed", got)
		}
		if !s.landed(t, o) {
			t.Error("the order is not in the database, but its COMMIT was to land")
		}
	})

	t.Run("not landed", func(t *testing.T) {
		// The database goes away between the statements and the COMMIT,
		// and rolls the transaction back; it is back when the shop asks.
		s := newShelf(t, db, buckets)
		before := s.left(t)
		o := s.order("u1", 1)
		err := s.sell(ctx, o, s.db.Stop)
		s.db.Start()
		wantCommitError(t, err)
		got := s.w.AfterFailure(ctx, o, err)
		if got != err {
			t.Errorf("AfterFailure: %v, want the COMMIT's error as it is (%v): the order is not there", got, err)
		}
		if errors.Is(got, ErrInDoubt) {
			t.Errorf("AfterFailure: %v is ErrInDoubt, but the database said the order is not there", got)
		}
		if s.landed(t, o) {
			t.Error("the order is in the database after a COMMIT that was rolled back")
		}
		if got, want := s.left(t), before; got != want {
			t.Errorf("stock left: got %d, want %d", got, want)
		}
	})

	t.Run("database cannot tell", func(t *testing.T) {
		// The COMMIT lands, its answer is lost, and the database is down
		// when the shop asks: the order may exist.
		s := newShelf(t, db, buckets)
		o := s.order("u1", 1)
		s.fault.LoseNextAnswer(true)
		err := s.sell(ctx, o, nil)
		wantCommitError(t, err)
		got := s.w.AfterFailure(ctx, o, err)
		s.db.Start()
		if !errors.Is(got, ErrInDoubt) || !errors.Is(got, err) {
			t.Errorf("AfterFailure: %v, want ErrInDoubt wrapping the COMMIT's error", got)
		}
		if !s.landed(t, o) {
			t.Error("the order is not in the database, but its COMMIT landed")
		}
	})

	t.Run("the buyer gave up", func(t *testing.T) {
		// Nobody waits for the answer: the database is not asked, and the
		// honest answer is that the order may exist.
		s := newShelf(t, db, buckets)
		o := s.order("u1", 1)
		s.fault.LoseNextAnswer(false)
		err := s.sell(ctx, o, nil)
		wantCommitError(t, err)
		gone, cancel := context.WithCancel(ctx)
		cancel()
		got := s.w.AfterFailure(gone, o, err)
		if !errors.Is(got, ErrInDoubt) || !errors.Is(got, context.Canceled) || !errors.Is(got, err) {
			t.Errorf("AfterFailure: %v, want ErrInDoubt wrapping context.Canceled and the COMMIT's error", got)
		}
	})

	t.Run("the lock was lost", func(t *testing.T) {
		// The lock's context ends when the lock is lost, while the buyer
		// still waits: the database is asked all the same.
		s := newShelf(t, db, buckets)
		o := s.order("u1", 1)
		s.fault.LoseNextAnswer(false)
		err := s.sell(ctx, o, nil)
		wantCommitError(t, err)
		lost, cancel := context.WithCancelCause(ctx)
		cancel(dlock.ErrNotHeld)
		if got := s.w.AfterFailure(lost, o, err); got != nil {
			t.Errorf("AfterFailure: %v, want nil: the order landed, and the buyer waits for it", got)
		}
	})

	t.Run("a statement failed", func(t *testing.T) {
		// Sold out: the COMMIT was never sent, nothing is in doubt.
		s := newShelf(t, db, buckets)
		before := s.left(t)
		o := s.order("u1", before+1)
		err := s.sell(ctx, o, nil)
		if !errors.Is(err, ErrNoUnits) {
			t.Fatalf("Commit of %d units out of %d: %v, want ErrNoUnits", o.Quantity, before, err)
		}
		if got := s.w.AfterFailure(ctx, o, err); got != err {
			t.Errorf("AfterFailure: %v, want %v as it is", got, err)
		}
		if s.landed(t, o) {
			t.Error("the order of a rolled-back transaction is in the database")
		}
	})
}
