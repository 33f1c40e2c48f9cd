package redisdecr

import (
	"context"
	"errors"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestLowerSkipsAReturnAfterItsRead: the sweep reads the database's stock
// (S), an order's return commits (S+1) and reaches Redis (S+1), then the
// sweep lowers: it must leave Redis at S+1, or the returned unit is lost
// for good. The next sweep, with nothing in between, changes nothing.
func TestLowerSkipsAReturnAfterItsRead(t *testing.T) {
	for _, k := range []int{0, 4} {
		t.Run("buckets="+string(rune('0'+k)), func(t *testing.T) {
			testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
				ctx := context.Background()
				db := b.DB.DB()
				s := newShop(t, b, db, Options{})
				p := addProduct(ctx, t, b, db, "lower", stock.Product{Stock: 5, Buckets: k})
				if k > 0 { // each bucket's share, as a shop's AddProduct loads it
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
				returned := false
				s.afterRead = func(string) {
					if returned {
						return
					}
					returned = true
					returnOrder(ctx, t, s, p, o)
				}
				if err := s.lowerToDatabase(ctx, p.ID); err != nil && !errors.Is(err, redisstock.ErrReturned) {
					t.Fatalf("lowerToDatabase: %v", err)
				}
				checkReturned(ctx, t, b, s, p, o)
				if err := s.lowerToDatabase(ctx, p.ID); err != nil {
					t.Fatalf("lowerToDatabase again: %v", err)
				}
				checkReturned(ctx, t, b, s, p, o)
			})
		})
	}
}

// returnOrder returns o as a shop does: the database first (the order
// ended, its unit back), then Redis.
func returnOrder(ctx context.Context, t *testing.T, s *shop, p stock.Product, o orderdb.Order) {
	t.Helper()
	db := s.db.WithContext(ctx)
	if err := db.Exec("UPDATE orders SET state = 'cancelled', unique_buyer = NULL WHERE id = ?", o.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("UPDATE products SET stock = stock + ? WHERE id = ?", o.Quantity, p.ID).Error; err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Return(ctx, p, o); err != nil || !ok {
		t.Fatalf("Return = %v, %v", ok, err)
	}
}

// checkReturned checks that p has all its stock again, in the database
// and in Redis (o's bucket too, for a bucketed p).
func checkReturned(ctx context.Context, t *testing.T, b *testenv.Env, s *shop, p stock.Product, o orderdb.Order) {
	t.Helper()
	if got := stockOf(ctx, t, s.db, p.ID); got != p.InitialStock {
		t.Errorf("database stock %d, want %d", got, p.InitialStock)
	}
	res := redisstock.New(b.Redis.Clients()[0])
	total := 0
	for _, name := range s.namesOf(p.ID) {
		left, err := res.Left(ctx, name)
		if err != nil {
			t.Fatalf("Left(%s): %v", name, err)
		}
		total += left
	}
	if total != p.InitialStock {
		t.Errorf("redis stock %d, want %d: the returned unit was lowered away", total, p.InitialStock)
	}
	if o.Bucket != nil {
		left, _, err := bucketsLeft(s.db.WithContext(ctx), p.ID, p.Buckets)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := res.Left(ctx, s.nameOf(o))
		if got != left[*o.Bucket] {
			t.Errorf("bucket %d: redis %d, database %d", *o.Bucket, got, left[*o.Bucket])
		}
	}
}
