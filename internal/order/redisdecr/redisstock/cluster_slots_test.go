package redisstock_test

import (
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
)

// TestEveryScriptStaysInItsSlot, from the cold review of --redis-cluster:
// every script and transaction of package redisstock, on a product and on a
// bucket of one, runs on a real Redis Cluster, whose CROSSSLOT refusal
// any key outside its product's slot would meet. The shop's sales call
// take, lower, due and turn; give-back and the ledger's forget run only
// when a sale fails, which the shop's cluster test never makes happen.
func TestEveryScriptStaysInItsSlot(t *testing.T) {
	c := testenv.NewRedisCluster(t)
	s := redisstock.New(c.Client())
	ctx := t.Context()
	for _, product := range []string{c.Key("p"), redisstock.Bucket(c.Key("p"), 1, 3)} {
		t.Run(product, func(t *testing.T) {
			if err := s.Load(ctx, product, 5); err != nil {
				t.Fatalf("Load: %v", err)
			}
			if _, err := s.LoadIfMissing(ctx, product, 5); err != nil {
				t.Fatalf("LoadIfMissing: %v", err)
			}
			if _, err := s.Take(ctx, product, "u1", "o1", 1, time.Millisecond); err != nil {
				t.Fatalf("Take: %v", err)
			}
			if _, err := s.Take(ctx, product, "u2", "o2", 1, time.Hour); err != nil {
				t.Fatalf("Take: %v", err)
			}
			if ok, err := s.GiveBack(ctx, product, "u2", "o2", 1); err != nil || !ok {
				t.Fatalf("GiveBack = %v, %v", ok, err)
			}
			if _, err := s.Lower(ctx, product, 2, 0); err != nil {
				t.Fatalf("Lower: %v", err)
			}
			if _, err := s.Returns(ctx, product); err != nil {
				t.Fatalf("Returns: %v", err)
			}
			if ok, err := s.Return(ctx, product, redisstock.BuyersKey(product), "u1", "o1", 1); err != nil || !ok {
				t.Fatalf("Return = %v, %v", ok, err)
			}
			if _, _, _, err := s.Turn(ctx, product, time.Second, time.Second); err != nil {
				t.Fatalf("Turn: %v", err)
			}
			var due []redisstock.Reservation
			for len(due) == 0 { // o1's hold of a millisecond passes by Redis's clock
				var err error
				if due, _, err = s.Due(ctx, product, 10); err != nil {
					t.Fatalf("Due: %v", err)
				}
			}
			if err := s.Forget(ctx, product, due); err != nil {
				t.Fatalf("Forget: %v", err)
			}
			// 5, less two taken, plus o2 given back, lowered to 2, plus o1 returned.
			if left, err := s.Left(ctx, product); err != nil || left != 3 {
				t.Errorf("Left = %d, %v; want 3", left, err)
			}
		})
	}
}
