package reserve_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/reserve"
	"github.com/flashsale/flashsale/internal/testenv"
)

// TestTurn: of two sweepers asking for a product's turn, the first gets it
// and the second is told how many reservations the ledger holds; once the
// turn has run out, the next to ask gets it. Each product has turns of
// its own.
func TestTurn(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		a, b := reserve.New(r.Clients()[0]), reserve.New(r.Clients()[0])
		p, other := r.Key("p"), r.Key("other")
		if err := a.Load(ctx, p, 10); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"r1", "r2"} {
			if _, err := a.Take(ctx, p, "buyer-"+id, id, 1, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		const turn = 300 * time.Millisecond
		if mine, held, err := a.Turn(ctx, p, turn); err != nil || !mine || held != 2 {
			t.Fatalf("first ask: mine %v, held %d, %v; want the turn, 2 held", mine, held, err)
		}
		if mine, held, err := b.Turn(ctx, p, turn); err != nil || mine || held != 2 {
			t.Fatalf("second ask within the turn: mine %v, held %d, %v; want not mine, 2 held", mine, held, err)
		}
		if mine, held, err := b.Turn(ctx, other, turn); err != nil || !mine || held != 0 {
			t.Fatalf("another product's turn: mine %v, held %d, %v; want it, 0 held", mine, held, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			mine, _, err := b.Turn(ctx, p, turn)
			if err != nil {
				t.Fatal(err)
			}
			if mine {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the turn of %v never ran out", turn)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
