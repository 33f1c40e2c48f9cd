package order_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestVersionTriesRunOut: another writer moves the product's version on
// during every try's work, so every try's write finds it moved. The buyer
// is told ErrVersionConflict after VersionTries tries, each counted as
// version_moved, and nothing is written: the stock is as it was.
func TestVersionTriesRunOut(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		var id string
		db := b.DB.DB()
		bump := func(ctx context.Context, d time.Duration) error {
			if err := db.Exec("UPDATE products SET version = version + 1 WHERE id = ?", id).Error; err != nil {
				return err
			}
			return orderdb.Sleep(ctx, d)
		}
		rec := &recorder{}
		shop := newShops(t, b, 1, order.Options{Sleep: bump, Observer: rec})[0]
		p := newProduct(t, b, "version-outrun", stock.Product{Strategy: strategy.SQLVersion, Stock: 5,
			Work: time.Millisecond})
		id = p.ID

		_, err := shop.Place(context.Background(), order.Request{UserID: "slow", ProductID: p.ID, Quantity: 1})

		if !errors.Is(err, order.ErrVersionConflict) {
			t.Fatalf("Place: got %v, want %v", err, order.ErrVersionConflict)
		}
		if got := shop.Events(p.ID).VersionMoved; got != order.VersionTries {
			t.Errorf("tries that found the version moved: got %d, want %d", got, order.VersionTries)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLVersion,
			InitialStock: 5, Stock: 5, Consistent: true})
		rec.mu.Lock()
		placed := slices.Clone(rec.placed)
		rec.mu.Unlock()
		if !slices.Equal(placed, []string{"version_conflict"}) {
			t.Errorf("orders counted %v, want one version_conflict", placed)
		}
	})
}

// TestVersionLosesToAnotherWrite: a buyer whose write is outrun once
// tries again, reads the stock the other write left, and sells from it:
// one lost try, one order, and the stock counts both sales.
func TestVersionLosesToAnotherWrite(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		other := newShops(t, b, 1, order.Options{})[0]
		var p stock.Product
		h := &hookSleep{hook: func(ctx context.Context) {
			// Another buyer buys, on another shop, while this one works.
			mustPlace(ctx, t, other, p.ID, "quick")
		}}
		shop := newShops(t, b, 1, order.Options{Sleep: h.Sleep})[0]
		p = newProduct(t, b, "version-lose-once", stock.Product{Strategy: strategy.SQLVersion, Stock: 5})
		h.armed.Store(true)

		mustPlace(context.Background(), t, shop, p.ID, "slow")

		if got := shop.Events(p.ID).VersionMoved; got != 1 {
			t.Errorf("tries that found the version moved: got %d, want 1", got)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLVersion,
			InitialStock: 5, Stock: 3, Orders: 2, Sold: 2, Consistent: true})
	})
}
