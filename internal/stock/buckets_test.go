package stock_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		stock, k int
		want     []int
	}{
		{10, 4, []int{3, 3, 2, 2}},
		{3, 4, []int{1, 1, 1, 0}},
		{8, 4, []int{2, 2, 2, 2}},
	} {
		if got := stock.Split(c.stock, c.k); !slices.Equal(got, c.want) {
			t.Errorf("Split(%d, %d): got %v, want %v", c.stock, c.k, got, c.want)
		}
	}
}

// A bucketed product gets its rows at Create, and Get returns their sum
// as its stock; only sql-atomic and redis-decr split.
func TestCreateBuckets(t *testing.T) {
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		ctx := context.Background()
		s := stock.NewStore(db.DB())
		if _, err := s.Create(ctx, stock.Product{ID: "b", Stock: 10, Strategy: strategy.SQLAtomic, Buckets: 4}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		per, err := stock.Buckets(ctx, db.DB(), "b")
		if err != nil || !slices.Equal(per, []int{3, 3, 2, 2}) {
			t.Errorf("buckets: got %v, %v; want [3 3 2 2]", per, err)
		}
		if err := db.DB().Exec("UPDATE stock_buckets SET stock = stock - 1 WHERE product_id = 'b' AND bucket = 2").Error; err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "b")
		if err != nil || got.Stock != 9 || got.InitialStock != 10 || got.Buckets != 4 {
			t.Errorf("Get: got stock %d of %d in %d buckets, %v; want 9 of 10 in 4", got.Stock, got.InitialStock, got.Buckets, err)
		}
		// redis-decr's buckets are in Redis: the database keeps one stock.
		if _, err := s.Create(ctx, stock.Product{ID: "d", Stock: 10, Strategy: strategy.RedisDecr, Buckets: 3}); err != nil {
			t.Errorf("Create a redis-decr product in 3 buckets: %v", err)
		}
		if per, err := stock.Buckets(ctx, db.DB(), "d"); err != nil || len(per) != 0 {
			t.Errorf("redis-decr's bucket rows: got %v, %v; want none", per, err)
		}
		if got, err := s.Get(ctx, "d"); err != nil || got.Stock != 10 || got.Buckets != 3 {
			t.Errorf("Get redis-decr: got stock %d in %d buckets, %v; want 10 in 3", got.Stock, got.Buckets, err)
		}
		for _, p := range []stock.Product{
			{ID: "lua", Stock: 10, Strategy: strategy.Lua, Buckets: 4},
			{ID: "many", Stock: 10, Strategy: strategy.SQLAtomic, Buckets: stock.MaxBuckets + 1},
		} {
			if _, err := s.Create(ctx, p); !errors.Is(err, stock.ErrInvalid) {
				t.Errorf("Create %s: got %v, want %v", p.ID, err, stock.ErrInvalid)
			}
		}
	})
}
