package redisstock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestReturnOnce: an ended order's units come back once, however often
// the return is sent, and its buyer may buy again.
func TestReturnOnce(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		s := redisstock.New(r.Clients()[0])
		p := r.Key("p")
		if err := s.Load(ctx, p, 2); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Take(ctx, p, "alice", "o1", 1, time.Hour); err != nil {
			t.Fatal(err)
		}
		for i, want := range []bool{true, false, false} {
			if ok, err := s.Return(ctx, p, redisstock.BuyersKey(p), "alice", "o1", 1); err != nil || ok != want {
				t.Errorf("Return #%d = %v, %v; want %v", i+1, ok, err, want)
			}
		}
		checkLeft(t, s, p, 2)
		if n, err := s.Returns(ctx, p); err != nil || n != 1 {
			t.Errorf("Returns = %d, %v; want 1", n, err)
		}
		if _, err := s.Take(ctx, p, "alice", "o2", 1, time.Hour); err != nil {
			t.Errorf("alice after her return: %v", err)
		}
	})
}

// TestLowerAfterReturn: a Lower to a stock read before a return changes
// nothing; one read after it lowers.
func TestLowerAfterReturn(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		s := redisstock.New(r.Clients()[0])
		p := r.Key("p")
		if err := s.Load(ctx, p, 5); err != nil {
			t.Fatal(err)
		}
		before, err := s.Returns(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Return(ctx, p, redisstock.BuyersKey(p), "bob", "o9", 1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lower(ctx, p, 3, before); !errors.Is(err, redisstock.ErrReturned) {
			t.Errorf("Lower with the count from before the return: %v, want ErrReturned", err)
		}
		checkLeft(t, s, p, 6)
		now, _ := s.Returns(ctx, p)
		if left, err := s.Lower(ctx, p, 3, now); err != nil || left != 3 {
			t.Errorf("Lower = %d, %v; want 3", left, err)
		}
	})
}

// TestReturnToLostStock: a return to a stock Redis lost changes nothing
// and says so; the load from the database marks the returns it counts,
// so that their sends add nothing, and a return it did not count adds
// its units.
func TestReturnToLostStock(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		s := redisstock.New(r.Clients()[0])
		p := r.Key("p")
		if _, err := s.Return(ctx, p, redisstock.BuyersKey(p), "alice", "o1", 1); !errors.Is(err, stock.ErrNotLoaded) {
			t.Fatalf("Return to a lost stock: %v, want stock.ErrNotLoaded", err)
		}
		if ok, err := s.LoadIfMissing(ctx, p, 5, "o1", "o2"); err != nil || !ok {
			t.Fatalf("LoadIfMissing = %v, %v; want true", ok, err)
		}
		if ok, err := s.LoadIfMissing(ctx, p, 9); err != nil || ok {
			t.Errorf("LoadIfMissing of a loaded stock = %v, %v; want false", ok, err)
		}
		for _, id := range []string{"o1", "o2"} {
			if ok, err := s.Return(ctx, p, redisstock.BuyersKey(p), "alice", id, 1); err != nil || ok {
				t.Errorf("Return %s, counted by the load = %v, %v; want false", id, ok, err)
			}
		}
		checkLeft(t, s, p, 5)
		if ok, err := s.Return(ctx, p, redisstock.BuyersKey(p), "bob", "o3", 1); err != nil || !ok {
			t.Errorf("Return o3 = %v, %v; want true", ok, err)
		}
		checkLeft(t, s, p, 6)
	})
}

// TestLowerAfterLoad: a Lower to a database stock read before a load
// (which may count a return that stock does not) changes nothing.
func TestLowerAfterLoad(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		s := redisstock.New(r.Clients()[0])
		p := r.Key("p")
		before, err := s.Returns(ctx, p) // Redis lost the stock: 0
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.LoadIfMissing(ctx, p, 4, "o1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lower(ctx, p, 3, before); !errors.Is(err, redisstock.ErrReturned) {
			t.Errorf("Lower with the count from before the load: %v, want ErrReturned", err)
		}
		checkLeft(t, s, p, 4)
	})
}
