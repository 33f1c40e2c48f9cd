package life_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// write inserts a pending order of product with a pay window of within,
// as a sale does, and returns its id.
func write(t *testing.T, db *gorm.DB, product, user string, within time.Duration) string {
	t.Helper()
	o := orderdb.Order{ID: uuid.NewString(), UserID: user, ProductID: product, Quantity: 1,
		Strategy: "sql-atomic", CreatedAt: time.Now().UTC().Truncate(time.Microsecond), PayWithin: within}
	if err := db.Transaction(func(tx *gorm.DB) error { return orderdb.Insert(tx, o) }); err != nil {
		t.Fatalf("insert: %v", err)
	}
	return o.ID
}

// end runs life.End in a transaction of its own.
func end(db *gorm.DB, id string, to life.State) (ended bool, err error) {
	err = db.Transaction(func(tx *gorm.DB) error {
		_, ended, err = life.End(tx, id, to)
		return err
	})
	return ended, err
}

// TestStateMachine: each change is allowed from pending only, once, and
// expiry only after the deadline by the database's clock.
func TestStateMachine(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		ctx, db := context.Background(), tdb.DB()
		t.Run("cancel once, then neither pay nor expire", func(t *testing.T) {
			id := write(t, db, "p1", "u1", time.Minute)
			for i, want := range []bool{true, false} {
				if ended, err := end(db, id, life.Cancelled); err != nil || ended != want {
					t.Fatalf("cancel #%d: %v, %v; want %v, nil", i+1, ended, err, want)
				}
			}
			if _, _, err := life.Pay(ctx, db, id); !errors.Is(err, life.ErrCancelled) {
				t.Errorf("Pay: %v, want ErrCancelled", err)
			}
			if ended, err := end(db, id, life.Expired); ended || err != nil {
				t.Errorf("expire: %v, %v; want false, nil", ended, err)
			}
		})
		t.Run("pay once, then no cancel", func(t *testing.T) {
			id := write(t, db, "p1", "u2", time.Minute)
			for i, want := range []bool{true, false} {
				if o, paid, err := life.Pay(ctx, db, id); err != nil || paid != want || o.State != life.Paid {
					t.Fatalf("Pay #%d: %v, %v, %q; want paid", i+1, paid, err, o.State)
				}
			}
			if _, err := end(db, id, life.Cancelled); !errors.Is(err, life.ErrAlreadyPaid) {
				t.Errorf("cancel: %v, want ErrAlreadyPaid", err)
			}
		})
		t.Run("expire only when due", func(t *testing.T) {
			id := write(t, db, "p2", "u1", 40*time.Millisecond)
			if ended, err := end(db, id, life.Expired); ended || err != nil {
				t.Fatalf("expire before the deadline: %v, %v; want false, nil", ended, err)
			}
			testenv.WaitFor(t, 10*time.Second, "the order to be due", func() bool {
				due, err := life.Due(ctx, db, 10)
				if err != nil {
					t.Fatalf("Due: %v", err)
				}
				return len(due) == 1 && due[0].ID == id
			})
			if _, _, err := life.Pay(ctx, db, id); !errors.Is(err, life.ErrExpired) {
				t.Errorf("Pay after the deadline: %v, want ErrExpired", err)
			}
			if ended, err := end(db, id, life.Expired); !ended || err != nil {
				t.Fatalf("expire: %v, %v; want true, nil", ended, err)
			}
			if _, err := end(db, id, life.Cancelled); !errors.Is(err, life.ErrExpired) {
				t.Errorf("cancel an expired order: %v, want ErrExpired", err)
			}
			write(t, db, "p2", "u1", time.Minute) // its buyer buys again: the unique key let go
		})
		t.Run("unknown", func(t *testing.T) {
			if _, err := end(db, uuid.NewString(), life.Cancelled); !errors.Is(err, stock.ErrUnknownOrder) {
				t.Errorf("cancel: %v, want ErrNotFound", err)
			}
		})
	})
}
