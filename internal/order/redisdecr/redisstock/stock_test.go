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

func TestTakeAndGiveBack(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		s := redisstock.New(r.Clients()[0])
		p := r.Key("p")

		if _, err := s.Take(ctx, p, "alice", "r1", 1, time.Hour); !errors.Is(err, stock.ErrNotLoaded) {
			t.Fatalf("Take before Load: got %v, want %v", err, stock.ErrNotLoaded)
		}
		if err := s.Load(ctx, p, 3); err != nil {
			t.Fatal(err)
		}
		if left, err := s.Take(ctx, p, "alice", "r1", 2, time.Hour); err != nil || left != 1 {
			t.Fatalf("alice takes 2 of 3: got %d, %v; want 1 left", left, err)
		}
		// The buyer is checked before the stock: a repeated click takes
		// nothing, whatever is left.
		if _, err := s.Take(ctx, p, "alice", "r2", 1, time.Hour); !errors.Is(err, stock.ErrDuplicate) {
			t.Errorf("alice again: got %v, want %v", err, stock.ErrDuplicate)
		}
		if _, err := s.Take(ctx, p, "bob", "r3", 2, time.Hour); !errors.Is(err, stock.ErrSoldOut) {
			t.Errorf("bob takes 2 of 1: got %v, want %v", err, stock.ErrSoldOut)
		}
		checkLeft(t, s, p, 1)

		// Only alice's current reservation comes back, once.
		for _, c := range []struct {
			buyer, id string
			want      bool
		}{
			{"alice", "r2", false}, // her refused click: not hers to give back
			{"bob", "r3", false},   // never made
			{"alice", "r1", true},
			{"alice", "r1", false}, // again: nothing left to give
		} {
			held, err := s.GiveBack(ctx, p, c.buyer, c.id, 2)
			if err != nil || held != c.want {
				t.Errorf("GiveBack(%s, %s) = %v, %v; want %v", c.buyer, c.id, held, err, c.want)
			}
		}
		checkLeft(t, s, p, 3)
		// Given back, alice may buy again.
		if _, err := s.Take(ctx, p, "alice", "r4", 1, time.Hour); err != nil {
			t.Errorf("alice after her give-back: %v", err)
		}
		if ok, err := s.LoadIfMissing(ctx, p, 100); ok || err != nil {
			t.Errorf("LoadIfMissing over a loaded stock: %v, %v; want false, nil", ok, err)
		}
		checkLeft(t, s, p, 2)
	})
}

// A take that its sender gave up on (its reply timed out) and then gave
// back can still reach Redis afterwards, late on the wire: it must reserve
// nothing, and leave the buyer free to click again.
func TestTakeArrivingAfterItsGiveBackReservesNothing(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		s := redisstock.New(r.Clients()[0])
		p := r.Key("p")
		if err := s.Load(ctx, p, 3); err != nil {
			t.Fatal(err)
		}
		if held, err := s.GiveBack(ctx, p, "alice", "r1", 1); held || err != nil {
			t.Fatalf("GiveBack before its take: %v, %v; want false, nil", held, err)
		}
		if _, err := s.Take(ctx, p, "alice", "r1", 1, time.Hour); !errors.Is(err, redisstock.ErrGivenBack) {
			t.Errorf("the late take: got %v, want %v", err, redisstock.ErrGivenBack)
		}
		checkLeft(t, s, p, 3)
		if left, err := s.Take(ctx, p, "alice", "r2", 1, time.Hour); err != nil || left != 2 {
			t.Errorf("alice clicks again: got %d, %v; want 2 left", left, err)
		}
		checkDue(t, s, p, 1) // r2's, and nothing of the late take
	})
}

func checkLeft(t *testing.T, s *redisstock.Stock, p string, want int) {
	t.Helper()
	if got, err := s.Left(context.Background(), p); err != nil || got != want {
		t.Errorf("Left = %d, %v; want %d", got, err, want)
	}
}
