package redisdecr

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Attacks on the reconciler's Lower (issue 44): the returns counter that
// guards it against a database stock read before a return.

// TestLowerAfterALoadThatCountedAReturn: Redis has lost the product's
// keys (an empty restart). The sweep reads the returns counter (0: the
// key is gone) and the database's stock S. Then an order's return
// commits (S+1, a redis_owed row), a buyer's click loads the stock from
// the database (S+1, the return marked as counted: load.lua), and the
// shop's return.lua finds it counted (-1: no INCR of the counter). The
// sweep's Lower(S, 0) then finds the counter still 0 and lowers Redis to
// S: the returned unit is off sale for good (nothing ever raises Redis
// again), Redis one below the database.
//
// The load sets the stock from a database newer than the sweep's read,
// and says nothing to the counter that Lower checks. Fix: load.lua moves
// the returns counter (to a value a counter read before the loss cannot
// hold, since the loss reset it: e.g. Redis's TIME in µs), so that any
// Lower whose read predates a load refuses (ErrReturned).
func TestLowerAfterALoadThatCountedAReturn(t *testing.T) {
	for _, k := range []int{0, 4} {
		t.Run("buckets="+string(rune('0'+k)), func(t *testing.T) {
			testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
				ctx := context.Background()
				db := b.DB.DB()
				s := newShop(t, b, db, Options{})
				p := addProduct(ctx, t, b, db, "lowerload", stock.Product{Stock: 5, Buckets: k})
				if k > 0 {
					if err := s.Load(ctx, p); err != nil {
						t.Fatal(err)
					}
				}
				o := newOrder(p, "u1")
				s.KeepSweeping(p)
				if err := s.Place(ctx, p, o); err != nil {
					t.Fatalf("Place: %v", err)
				}
				if err := db.Raw("SELECT bucket FROM orders WHERE id = ?", o.ID).Row().Scan(&o.Bucket); err != nil {
					t.Fatal(err)
				}
				c := b.Redis.Clients()[0]
				name := s.nameOf(o)
				for _, key := range []string{redisstock.StockKey(name), redisstock.BuyersKey(name), "flashsale:reserved:{" + name + "}",
					"flashsale:returned:{" + name + "}", "flashsale:returns:{" + name + "}"} {
					if err := c.Del(ctx, key).Err(); err != nil {
						t.Fatal(err)
					}
				}
				done := false
				s.afterRead = func(string) {
					if done {
						return
					}
					done = true
					// The return commits, as package order's give does: the
					// order ended, its unit back, the owed row.
					returnOwed(ctx, t, db, p, o)
					// A buyer's click finds no stock and loads it, as
					// reserve does (databaseStock, LoadIfMissing).
					left, owedIDs, err := s.databaseStock(ctx, o)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := s.res.LoadIfMissing(ctx, name, left, owedIDs...); err != nil {
						t.Fatal(err)
					}
					// The shop pays Redis its return: counted already.
					if ok, err := s.Return(ctx, p, o); err != nil || ok {
						t.Fatalf("Return after the load = %v, %v; want false (counted by the load)", ok, err)
					}
				}
				if err := s.lowerToDatabase(ctx, p.ID); err != nil && !errors.Is(err, redisstock.ErrReturned) &&
					!errors.Is(err, stock.ErrNotLoaded) {
					t.Fatalf("lowerToDatabase: %v", err)
				}
				if !done {
					t.Fatal("the hook did not run")
				}
				checkReturned(ctx, t, b, s, p, o)
			})
		})
	}
}

// returnOwed ends o (cancelled) in db and gives its unit back there,
// with the row that says Redis is owed it, in one transaction, as
// package order's give does.
func returnOwed(ctx context.Context, t *testing.T, db *gorm.DB, p stock.Product, o orderdb.Order) {
	t.Helper()
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE orders SET state = 'cancelled', unique_buyer = NULL WHERE id = ?", o.ID).Error; err != nil {
			return err
		}
		if err := tx.Exec("UPDATE products SET stock = stock + ? WHERE id = ?", o.Quantity, p.ID).Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO redis_owed (order_id, product_id, bucket, user_id, quantity, created_ms)
			VALUES (?, ?, ?, ?, ?, 0)`, o.ID, o.ProductID, o.Bucket, o.UserID, o.Quantity).Error
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLowerAfterALoadAndAReturnSinceTheRead: as
// TestLowerAfterALoadThatCountedAReturn, with an earlier return that
// had moved the counter to 1 before the sweep read it. The loss resets
// the counter (its key is gone), the load leaves it unset, and one more
// return after the load moves it to 1 again: the sweep's Lower finds
// the 1 it read and lowers Redis to a stock read before two returns.
// A load that only INCRs the counter would not do either (the loss
// reset it: 1 again). The counter must not repeat a value across a
// loss.
func TestLowerAfterALoadAndAReturnSinceTheRead(t *testing.T) {
	for _, k := range []int{0, 4} {
		t.Run("buckets="+string(rune('0'+k)), func(t *testing.T) {
			testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
				ctx := context.Background()
				db := b.DB.DB()
				s := newShop(t, b, db, Options{})
				p := addProduct(ctx, t, b, db, "lowerload2", stock.Product{Stock: 20, Buckets: k})
				if k > 0 {
					if err := s.Load(ctx, p); err != nil {
						t.Fatal(err)
					}
				}
				s.KeepSweeping(p)
				var orders []orderdb.Order
				for _, u := range sameStockUsers(p, 3) {
					o := newOrder(p, u)
					if err := s.Place(ctx, p, o); err != nil {
						t.Fatalf("Place: %v", err)
					}
					if err := db.Raw("SELECT bucket FROM orders WHERE id = ?", o.ID).Row().Scan(&o.Bucket); err != nil {
						t.Fatal(err)
					}
					orders = append(orders, o)
				}
				early, o, late := orders[0], orders[1], orders[2]
				returnOwed(ctx, t, db, p, early)
				if ok, err := s.Return(ctx, p, early); err != nil || !ok {
					t.Fatalf("Return = %v, %v", ok, err)
				}
				name := s.nameOf(o)
				done := false
				s.afterRead = func(string) {
					if done {
						return
					}
					done = true
					c := b.Redis.Clients()[0]
					for _, key := range []string{redisstock.StockKey(name), redisstock.BuyersKey(name), "flashsale:reserved:{" + name + "}",
						"flashsale:returned:{" + name + "}", "flashsale:returns:{" + name + "}"} {
						if err := c.Del(ctx, key).Err(); err != nil {
							t.Fatal(err)
						}
					}
					returnOwed(ctx, t, db, p, o)
					left, owedIDs, err := s.databaseStock(ctx, o)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := s.res.LoadIfMissing(ctx, name, left, owedIDs...); err != nil {
						t.Fatal(err)
					}
					if ok, err := s.Return(ctx, p, o); err != nil || ok {
						t.Fatalf("Return after the load = %v, %v; want false (counted by the load)", ok, err)
					}
					returnOwed(ctx, t, db, p, late)
					if ok, err := s.Return(ctx, p, late); err != nil || !ok {
						t.Fatalf("Return of the later order = %v, %v; want true", ok, err)
					}
				}
				if err := s.lowerToDatabase(ctx, p.ID); err != nil && !errors.Is(err, redisstock.ErrReturned) &&
					!errors.Is(err, stock.ErrNotLoaded) {
					t.Fatalf("lowerToDatabase: %v", err)
				}
				if !done {
					t.Fatal("the hook did not run")
				}
				checkReturned(ctx, t, b, s, p, o)
			})
		})
	}
}

// sameStockUsers returns n buyers whose orders of p are taken from the
// same Redis stock (p's own, or one home bucket).
func sameStockUsers(p stock.Product, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		u := "u" + strconv.Itoa(i)
		if p.Buckets < 2 || orderdb.HomeBucket(u, p.Buckets) == orderdb.HomeBucket("u0", p.Buckets) {
			out = append(out, u)
		}
	}
	return out
}
