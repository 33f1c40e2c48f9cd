package redisstock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
)

// TestLedger: every reservation taken is in the ledger until it is given
// back or forgotten (sold); Due returns those past their hold by Redis's
// clock, and counts them all.
func TestLedger(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		s := redisstock.New(r.Clients()[0])
		p := r.Key("p")
		if err := s.Load(ctx, p, 10); err != nil {
			t.Fatal(err)
		}
		// Two past their hold at once, one held for an hour. The buyer's id
		// may hold the separator.
		for _, tk := range []struct {
			buyer, id string
			qty       int
			hold      time.Duration
		}{{"a|b:c", "r1", 2, 0}, {"bob", "r2", 1, 0}, {"carol", "r3", 1, time.Hour}} {
			if _, err := s.Take(ctx, p, tk.buyer, tk.id, tk.qty, tk.hold); err != nil {
				t.Fatal(err)
			}
		}
		checkDue(t, s, p, 3, redisstock.Reservation{Product: p, Buyer: "a|b:c", ID: "r1", Quantity: 2},
			redisstock.Reservation{Product: p, Buyer: "bob", ID: "r2", Quantity: 1})

		// A limit of one returns the oldest.
		due, held, err := s.Due(ctx, p, 1)
		if err != nil || held != 3 || len(due) != 1 || due[0].ID != "r1" {
			t.Errorf("Due(limit 1) = %v, %d, %v; want r1 of 3", due, held, err)
		}

		// Bob's order is written: forgotten, he stays a buyer. Alice's is
		// given back: it leaves the ledger with her.
		if err := s.Forget(ctx, p, []redisstock.Reservation{{Product: p, Buyer: "bob", ID: "r2", Quantity: 1}}); err != nil {
			t.Fatal(err)
		}
		if held, err := s.GiveBack(ctx, p, "a|b:c", "r1", 2); err != nil || !held {
			t.Fatalf("GiveBack(r1) = %v, %v; want true", held, err)
		}
		checkDue(t, s, p, 1)
		if _, err := s.Take(ctx, p, "bob", "r4", 1, 0); err == nil {
			t.Error("bob, forgotten in the ledger, could take again; want a duplicate")
		}
		checkLeft(t, s, p, 10-1-1)

		// A new sale forgets the ledger.
		if err := s.Load(ctx, p, 5); err != nil {
			t.Fatal(err)
		}
		checkDue(t, s, p, 0)
	})
}

// TestLedgerGiveBackNotHeld: a give-back of a reservation that is not the
// buyer's current one takes it out of the ledger all the same, and gives
// nothing back.
func TestLedgerGiveBackNotHeld(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		s := redisstock.New(r.Clients()[0])
		p := r.Key("p")
		if err := s.Load(ctx, p, 3); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Take(ctx, p, "alice", "r1", 1, 0); err != nil {
			t.Fatal(err)
		}
		// Her buyer entry is lost (as a Redis that lost the hash would).
		if err := r.Clients()[0].Del(ctx, "flashsale:buyers:{"+p+"}").Err(); err != nil {
			t.Fatal(err)
		}
		if held, err := s.GiveBack(ctx, p, "alice", "r1", 1); err != nil || held {
			t.Fatalf("GiveBack = %v, %v; want false", held, err)
		}
		checkDue(t, s, p, 0)
		checkLeft(t, s, p, 2)
	})
}

// checkDue checks what Due says of product p: held reservations in all,
// want of them past their hold (in order).
func checkDue(t *testing.T, s *redisstock.Stock, p string, held int, want ...redisstock.Reservation) {
	t.Helper()
	due, n, err := s.Due(context.Background(), p, 100)
	if err != nil || n != held || !slices.Equal(due, want) {
		t.Errorf("Due = %v, %d, %v; want %v, %d", due, n, err, want, held)
	}
}
