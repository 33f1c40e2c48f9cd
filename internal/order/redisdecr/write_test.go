package redisdecr

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestWriteAfterAReclaim: redis-decr's write takes its units only while
// the product's reclaims are what it saw before its reservation was made
// (reclaim.go). A sweep that reclaims in between moves them on, and
// the write looks in reclaimed: its own reservation there refuses it,
// another's does not, and the shop remembers the new count.
func TestWriteAfterAReclaim(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db := b.DB.DB()
		s := newShop(t, b, db, Options{})
		sweep := func(t *testing.T, p stock.Product, o orderdb.Order) {
			t.Helper()
			open := []redisstock.Reservation{{Product: p.ID, Buyer: o.UserID, ID: o.ID, Quantity: 1}}
			err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
				reclaimed, _, err := reclaimIn(tx, p.ID, open)
				if err == nil && len(reclaimed) != 1 {
					t.Errorf("the sweep reclaimed %v, want %s's reservation", reclaimed, o.UserID)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		seen := func(t *testing.T, p stock.Product) int64 {
			t.Helper()
			n, err := s.reclaimsSeen(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}

		t.Run("its own reservation, reclaimed after its insert", func(t *testing.T) {
			if db.Dialector.Name() != "mysql" {
				t.Skip("SQLite has one writer at a time: no sweep commits between the write's INSERT and its UPDATE")
			}
			p := addProduct(ctx, t, b, db, "reclaims-own", stock.Product{Stock: 3})
			before := seen(t, p)
			o := newOrder(p, "slow")
			tx := db.WithContext(ctx).Begin()
			defer tx.Rollback()
			if err := orderdb.Insert(tx, o); err != nil {
				t.Fatal(err)
			}
			// The sweep does not see the uncommitted order, and reclaims it.
			sweep(t, p, o)
			if err := s.takeReserved(tx, o, before); !errors.Is(err, errReclaimed) {
				t.Fatalf("the write after the sweep: got %v, want %v", err, errReclaimed)
			}
			tx.Rollback()
			if n := ordersOf(ctx, t, db, p.ID, "slow"); n != 0 {
				t.Errorf("slow's orders: %d, want 0", n)
			}
			if left, err := orderdb.ReadStock(ctx, db, p.ID); err != nil || left != 3 {
				t.Errorf("stock: %d (%v), want 3: the refused order took nothing", left, err)
			}
			if got, want := seen(t, p), before+1; got != want {
				t.Errorf("reclaims seen after the slow path: %d, want %d", got, want)
			}
		})

		t.Run("another's reservation reclaimed", func(t *testing.T) {
			p := addProduct(ctx, t, b, db, "reclaims-other", stock.Product{Stock: 3})
			before := seen(t, p)
			sweep(t, p, newOrder(p, "dead"))
			o := newOrder(p, "alive")
			err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return s.writeReserved(tx, o, before) })
			if err != nil {
				t.Fatalf("the write of an order the sweep did not reclaim: %v", err)
			}
			if left, err := orderdb.ReadStock(ctx, db, p.ID); err != nil || left != 2 {
				t.Errorf("stock: %d (%v), want 2", left, err)
			}
			if got, want := seen(t, p), before+1; got != want {
				t.Errorf("reclaims seen after the slow path: %d, want %d", got, want)
			}
		})

		t.Run("no units", func(t *testing.T) {
			p := addProduct(ctx, t, b, db, "reclaims-none-left", stock.Product{Stock: 3})
			for i, user := range []string{"a", "b", "c", "d"} {
				o := newOrder(p, user)
				err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return s.writeReserved(tx, o, seen(t, p)) })
				if i < 3 && err != nil {
					t.Fatalf("order %d: %v", i+1, err)
				}
				if i == 3 && !errors.Is(err, orderdb.ErrNoUnits) {
					t.Errorf("the fourth order of three units: got %v, want %v", err, orderdb.ErrNoUnits)
				}
			}
		})
	})
}

// redisDecrSale is a redis-decr product of 3 units and a shop on b.
func redisDecrSale(ctx context.Context, t *testing.T, b *testenv.Env, name string) (*shop, stock.Product) {
	t.Helper()
	db := b.DB.DB()
	s := newShop(t, b, db, Options{})
	p := addProduct(ctx, t, b, db, name, stock.Product{Stock: 3})
	return s, p
}

func reclaimsOf(ctx context.Context, t *testing.T, db *gorm.DB, product string) int64 {
	t.Helper()
	var n int64
	if err := db.WithContext(ctx).Raw("SELECT reclaims FROM products WHERE id = ?", product).Row().Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWriteMeetsASweepThatHoldsTheRow, on InnoDB: the order's INSERT is
// in, a sweep takes the row and decides to reclaim (it cannot see the
// uncommitted order), and only then does the order's UPDATE come: a
// current read once the sweep let the row go, which sees reclaims moved
// on. Then two sweeps at once; then a conflict retry with a sweep between
// the tries. Each time the order must be refused.
func TestWriteMeetsASweepThatHoldsTheRow(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		db := b.DB.DB()
		if db.Dialector.Name() != "mysql" {
			t.Skip("SQLite: the order's INSERT holds the one write lock; no sweep runs between its statements")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()

		refused := func(t *testing.T, s *shop, p stock.Product, o orderdb.Order) {
			t.Helper()
			if n := ordersOf(ctx, t, db, p.ID, o.UserID); n != 0 {
				t.Errorf("%s's orders: %d, want 0: sold and reclaimed", o.UserID, n)
			}
			if left, err := orderdb.ReadStock(ctx, db, p.ID); err != nil || left != 3 {
				t.Errorf("stock %d (%v), want 3", left, err)
			}
		}

		t.Run("sweep decides while the INSERT is in; the UPDATE waits for its commit", func(t *testing.T) {
			s, p := redisDecrSale(ctx, t, b, "meet-semi")
			seen, err := s.reclaimsSeen(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			o := newOrder(p, "slow")
			open := []redisstock.Reservation{{Product: p.ID, Buyer: o.UserID, ID: o.ID, Quantity: 1}}
			order := db.WithContext(ctx).Begin() // as transact: the default isolation
			defer order.Rollback()
			if err := orderdb.Insert(order, o); err != nil {
				t.Fatal(err)
			}
			sweep := db.WithContext(ctx).Begin()
			defer sweep.Rollback()
			reclaimed, _, err := reclaimIn(sweep, p.ID, open)
			if err != nil || !slices.Equal(reclaimed, open) {
				t.Fatalf("sweep: reclaimed %v, %v", reclaimed, err)
			}
			took := make(chan error, 1)
			go func() { took <- s.takeReserved(order, o, seen) }()
			waitsForRow(ctx, t, db, p.ID)
			if err := sweep.Commit().Error; err != nil {
				t.Fatal(err)
			}
			if err := <-took; !errors.Is(err, errReclaimed) {
				t.Fatalf("the order's take after the sweep: %v, want %v", err, errReclaimed)
			}
			order.Rollback()
			refused(t, s, p, o)
		})

		t.Run("two sweeps at once", func(t *testing.T) {
			s, p := redisDecrSale(ctx, t, b, "meet-two-sweeps")
			seen, err := s.reclaimsSeen(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			o := newOrder(p, "slow")
			open := []redisstock.Reservation{{Product: p.ID, Buyer: o.UserID, ID: o.ID, Quantity: 1}}
			order := db.WithContext(ctx).Begin() // as transact: the default isolation
			defer order.Rollback()
			if err := orderdb.Insert(order, o); err != nil {
				t.Fatal(err)
			}
			first := db.WithContext(ctx).Begin()
			defer first.Rollback()
			if r, _, err := reclaimIn(first, p.ID, open); err != nil || len(r) != 1 {
				t.Fatalf("first sweep: %v, %v", r, err)
			}
			var second []redisstock.Reservation
			secondDone := inTurn(ctx, t, db, p.ID, func(tx *gorm.DB) error {
				var err error
				second, _, err = reclaimIn(tx, p.ID, open)
				return err
			})
			if err := first.Commit().Error; err != nil {
				t.Fatal(err)
			}
			if err := <-secondDone; err != nil || len(second) != 1 {
				t.Fatalf("second sweep: %v, %v", second, err)
			}
			if err := s.takeReserved(order, o, seen); !errors.Is(err, errReclaimed) {
				t.Fatalf("the order's take after two sweeps: %v, want %v", err, errReclaimed)
			}
			order.Rollback()
			refused(t, s, p, o)
			if got := reclaimsOf(ctx, t, db, p.ID); got != seen+2 {
				t.Errorf("reclaims %d, want %d", got, seen+2)
			}
		})

		t.Run("a conflict retry with a sweep between the tries", func(t *testing.T) {
			s, p := redisDecrSale(ctx, t, b, "meet-retry")
			seen, err := s.reclaimsSeen(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			o := newOrder(p, "slow")
			open := []redisstock.Reservation{{Product: p.ID, Buyer: o.UserID, ID: o.ID, Quantity: 1}}
			tries := 0
			err = s.w.Commit(ctx, nil, p, func(tx *gorm.DB) error {
				tries++
				if tries == 1 {
					if err := orderdb.Insert(tx, o); err != nil {
						return err
					}
					if err := db.WithContext(ctx).Transaction(func(sw *gorm.DB) error {
						_, _, err := reclaimIn(sw, p.ID, open)
						return err
					}); err != nil {
						t.Fatal(err)
					}
					return &mysql.MySQLError{Number: 1213, Message: "Deadlock found (the test's)"}
				}
				return s.writeReserved(tx, o, seen) // seen as read before the first try
			})
			if tries != 2 || !errors.Is(err, errReclaimed) {
				t.Fatalf("after %d tries: %v, want %v on the retry", tries, err, errReclaimed)
			}
			refused(t, s, p, o)
		})
	})
}
