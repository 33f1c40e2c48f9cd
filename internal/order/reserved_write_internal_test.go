package order

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/reserve"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// TestWriteAfterAReclaim: redis-decr's write takes its units only while
// the product's reclaims are what it saw before its reservation was made
// (reserved_write.go). A sweep that reclaims in between moves them on, and
// the write looks in reclaimed: its own reservation there refuses it,
// another's does not, and the shop remembers the new count.
func TestWriteAfterAReclaim(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db := b.DB.DB()
		s := NewService(db, stock.NewStore(db), nil, Options{Reservations: reserve.New(b.Redis.Clients()[0]),
			Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(func() { s.Close() })
		sale := func(t *testing.T, name string) stock.Product {
			p, err := s.AddProduct(ctx, stock.Product{ID: b.Redis.Key(name), Strategy: strategy.RedisDecr, Stock: 3})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		sweep := func(t *testing.T, p stock.Product, o Order) {
			t.Helper()
			open := []reserve.Reservation{{Product: p.ID, Buyer: o.UserID, ID: o.ID, Quantity: 1}}
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
			p := sale(t, "reclaims-own")
			before := seen(t, p)
			o := newOrder(p, Request{UserID: "slow", ProductID: p.ID, Quantity: 1})
			tx := db.WithContext(ctx).Begin()
			defer tx.Rollback()
			if err := insertOrder(tx, o); err != nil {
				t.Fatal(err)
			}
			// The sweep does not see the uncommitted order, and reclaims it.
			sweep(t, p, o)
			if err := s.takeReserved(tx, o, before); !errors.Is(err, errReclaimed) {
				t.Fatalf("the write after the sweep: got %v, want %v", err, errReclaimed)
			}
			tx.Rollback()
			if n, err := countOrders(ctx, db, p.ID, "slow"); err != nil || n != 0 {
				t.Errorf("slow's orders: %d (%v), want 0", n, err)
			}
			if left, err := readStock(ctx, db, p.ID); err != nil || left != 3 {
				t.Errorf("stock: %d (%v), want 3: the refused order took nothing", left, err)
			}
			if got, want := seen(t, p), before+1; got != want {
				t.Errorf("reclaims seen after the slow path: %d, want %d", got, want)
			}
		})

		t.Run("another's reservation reclaimed", func(t *testing.T) {
			p := sale(t, "reclaims-other")
			before := seen(t, p)
			sweep(t, p, newOrder(p, Request{UserID: "dead", ProductID: p.ID, Quantity: 1}))
			o := newOrder(p, Request{UserID: "alive", ProductID: p.ID, Quantity: 1})
			err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return s.writeReserved(tx, o, before) })
			if err != nil {
				t.Fatalf("the write of an order the sweep did not reclaim: %v", err)
			}
			if left, err := readStock(ctx, db, p.ID); err != nil || left != 2 {
				t.Errorf("stock: %d (%v), want 2", left, err)
			}
			if got, want := seen(t, p), before+1; got != want {
				t.Errorf("reclaims seen after the slow path: %d, want %d", got, want)
			}
		})

		t.Run("no units", func(t *testing.T) {
			p := sale(t, "reclaims-none-left")
			for i, user := range []string{"a", "b", "c", "d"} {
				o := newOrder(p, Request{UserID: user, ProductID: p.ID, Quantity: 1})
				err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return s.writeReserved(tx, o, seen(t, p)) })
				if i < 3 && err != nil {
					t.Fatalf("order %d: %v", i+1, err)
				}
				if i == 3 && !errors.Is(err, errNoUnits) {
					t.Errorf("the fourth order of three units: got %v, want %v", err, errNoUnits)
				}
			}
		})
	})
}
