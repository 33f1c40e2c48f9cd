package order_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestCommitLandingAfterItsAnswerWasLost: a COMMIT's connection breaks
// while the server is still working on it, and it lands 300 ms after the
// shop heard "connection reset" (a slow fsync, a proxy that dropped the
// client side first). The shop must not answer "nothing was written":
// asking the database at once, with a plain read, would say the order is
// not there. Its question waits behind the transaction still holding the
// product's row, so the buyer is told its order; a retry is a duplicate
// naming it; and nobody has a second order, in every strategy. A bucketed
// sql-atomic sale (sql-atomic+k4) writes no product row, only its bucket's:
// the question must wait on that.
func TestCommitLandingAfterItsAnswerWasLost(t *testing.T) {
	cases := []struct {
		name           strategy.Name
		batch, buckets int
	}{
		{strategy.Lua, 0, 0}, {strategy.Redlock, 0, 0}, {strategy.Fenced, 0, 0}, {strategy.SQLAtomic, 0, 0},
		{strategy.RedisDecr, 0, 0}, {strategy.Lua, 4, 0}, {strategy.Fenced, 4, 0}, {strategy.SQLAtomic, 0, 4},
	}
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, c := range cases {
			name := string(c.name) + batchSuffix(c.batch)
			if c.buckets > 0 {
				name += fmt.Sprintf("+k%d", c.buckets)
			}
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				db, fault := b.DB.OpenPool(t)
				shop := shopOn(t, b, db, order.Options{})
				p := newProduct(t, b, "landing-"+string(c.name), stock.Product{Strategy: c.name, Stock: 5,
					LockTTL: 2 * time.Second, BatchMax: c.batch, Buckets: c.buckets})
				mustPlace(ctx, t, shop, p.ID, "warm")

				fault.LoseNextAnswerEarly(300 * time.Millisecond)
				o, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				_, retry := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				fault.Wait()

				if n := fault.Lost(); n != 1 {
					t.Fatalf("setup: %d COMMIT answers lost, want 1", n)
				}
				if err != nil {
					t.Errorf("x, whose COMMIT landed: got %v, want its order", err)
				}
				var dup *order.DuplicateOrderError
				if !errors.As(retry, &dup) || dup.OrderID != o.ID {
					t.Errorf("x retries: got %v, want a duplicate naming order %q", retry, o.ID)
				}
				if c.buckets > 0 {
					checkBuckets(t, audit(t, shop, p.ID), c.buckets, 2)
					return
				}
				checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: c.name,
					InitialStock: 5, Stock: 3, Orders: 2, Sold: 2, Consistent: true})
			})
		}
	})
}

// TestCommitLandingLaterThanTheCheckWaits: the COMMIT lands 3 s after its
// answer was lost, later than the shop's check waits on MySQL (2 s): the
// buyer is told in_doubt there, never "nothing was written". SQLite waits
// for its write lock in a busy handler no context interrupts, for up to
// its busy timeout, so the check waits that long there, and the buyer is
// told its order.
func TestCommitLandingLaterThanTheCheckWaits(t *testing.T) {
	testenv.SkipShort(t, "a COMMIT landing 3 s late; TestCommitLandingAfterItsAnswerWasLost checks one landing 300 ms late")
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, fault := b.DB.OpenPool(t)
		shop := shopOn(t, b, db, order.Options{})
		p := newProduct(t, b, "landing-late", stock.Product{Strategy: strategy.SQLAtomic, Stock: 5})
		mustPlace(ctx, t, shop, p.ID, "warm")

		fault.LoseNextAnswerEarly(3 * time.Second)
		_, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
		fault.Wait()
		switch {
		case b.DB.Mode() == testenv.Embedded && err != nil:
			t.Errorf("x, whose COMMIT landed within SQLite's busy timeout: got %v, want its order", err)
		case err != nil && !errors.Is(err, order.ErrInDoubt):
			t.Errorf("x, whose COMMIT landed: got %v, want its order or %v", err, order.ErrInDoubt)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLAtomic,
			InitialStock: 5, Stock: 3, Orders: 2, Sold: 2, Consistent: true})
	})
}
