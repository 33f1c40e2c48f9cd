package redisstock_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
)

// TestTurn: of two sweepers asking for a product's turn, the first gets it
// and the second is told how many reservations the ledger holds; once the
// turn has run out, the next to ask gets it. Each product has turns of
// its own. A reservation past its hold by more than the margin is stuck,
// and every sweeper is told so, in turn or not.
func TestTurn(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		a, b := redisstock.New(r.Clients()[0]), redisstock.New(r.Clients()[0])
		p, other := r.Key("p"), r.Key("other")
		if err := a.Load(ctx, p, 10); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"r1", "r2"} {
			if _, err := a.Take(ctx, p, "buyer-"+id, id, 1, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		const turn, stuckAfter = 300 * time.Millisecond, time.Minute
		if mine, held, stuck, err := a.Turn(ctx, p, turn, stuckAfter); err != nil || !mine || held != 2 || stuck {
			t.Fatalf("first ask: mine %v, held %d, stuck %v, %v; want the turn, 2 held, none stuck", mine, held, stuck, err)
		}
		if mine, held, stuck, err := b.Turn(ctx, p, turn, stuckAfter); err != nil || mine || held != 2 || stuck {
			t.Fatalf("second ask within the turn: mine %v, held %d, stuck %v, %v; want not mine, 2 held, none stuck", mine, held, stuck, err)
		}
		if mine, held, stuck, err := b.Turn(ctx, other, turn, stuckAfter); err != nil || !mine || held != 0 || stuck {
			t.Fatalf("another product's turn: mine %v, held %d, stuck %v, %v; want it, 0 held, none stuck", mine, held, stuck, err)
		}
		// Due two minutes ago: stuck, and every sweeper is told, in turn or not.
		if _, err := a.Take(ctx, p, "buyer-r3", "r3", 1, -2*time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, held, stuck, err := b.Turn(ctx, p, turn, stuckAfter); err != nil || held != 3 || !stuck {
			t.Fatalf("one reservation stuck: held %d, stuck %v, %v; want 3 held, stuck", held, stuck, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			mine, _, _, err := b.Turn(ctx, p, turn, stuckAfter)
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
