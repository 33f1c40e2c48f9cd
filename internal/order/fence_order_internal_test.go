package order

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// TestFencedSeesPreviousCommit: holder A commits late (its lease ran out
// first); holder B, with a newer token and the same buyer, waits at its
// fence UPDATE and then sees A's stock and A's order: its snapshot is taken
// after the UPDATE, not at BEGIN (REPEATABLE READ).
func TestFencedSeesPreviousCommit(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		lockers := map[dlock.Mode]dlock.Locker{}
		for _, m := range []dlock.Mode{dlock.ModeLua, dlock.ModeFenced} {
			l, err := dlock.New(m, b.Redis.Clients())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			lockers[m] = l
		}
		db := b.DB.DB()
		s := NewService(db, stock.NewStore(db), lockers, Options{Logger: slog.New(slog.DiscardHandler)})
		p, err := s.AddProduct(ctx, stock.Product{ID: b.Redis.Key("rvfence"), Strategy: strategy.Fenced,
			Stock: 10, LockTTL: 100 * time.Millisecond, LateCommit: 600 * time.Millisecond, LateCommitEvery: 1})
		if err != nil {
			t.Fatal(err)
		}
		// Open a read view in B's session-to-be? Not possible across pools;
		// instead B starts while A's transaction is open and uncommitted.
		aDone := make(chan error, 1)
		go func() {
			_, err := s.Place(ctx, Request{UserID: "same", ProductID: p.ID, Quantity: 1})
			aDone <- err
		}()
		// Wait until A's lease ran out (A is holding its commit back).
		for s.Events(p.ID).LateCommits == 0 {
			time.Sleep(time.Millisecond)
		}
		var bl *dlock.Lock
		for {
			bl, err = lockers[dlock.ModeFenced].TryLock(ctx, productKey(p.ID), time.Second)
			if err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		defer bl.Release(context.Background())
		p.LateCommit = 0 // B commits normally
		start := time.Now()
		_, errB := s.buyFenced(bl.Context(), bl, p, Request{UserID: "same", ProductID: p.ID, Quantity: 1})
		t.Logf("B (token %d) after %v: %v", bl.Fence(), time.Since(start), errB)
		if errA := <-aDone; errA != nil {
			t.Fatalf("A: %v", errA)
		}
		if !errors.Is(errB, ErrDuplicateOrder) {
			t.Errorf("B: got %v, want %v (B did not see A's committed order)", errB, ErrDuplicateOrder)
		}
		a, err := s.Audit(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Orders != 1 || a.Stock != 9 || !a.Consistent {
			t.Errorf("audit %+v", a)
		}
	})
}

// TestStaleHolderAfterRolledBackFence: a stale holder is refused only by a
// newer registration that committed. A newer holder whose order is refused
// (duplicate buyer, sold out) rolls its fence back with the rest; the stale
// holder then registers and writes, and the stock stays right.
func TestStaleHolderAfterRolledBackFence(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		lockers := map[dlock.Mode]dlock.Locker{}
		for _, m := range []dlock.Mode{dlock.ModeLua, dlock.ModeFenced} {
			l, err := dlock.New(m, b.Redis.Clients())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			lockers[m] = l
		}
		db := b.DB.DB()
		s := NewService(db, stock.NewStore(db), lockers, Options{Logger: slog.New(slog.DiscardHandler)})
		p, err := s.AddProduct(ctx, stock.Product{ID: b.Redis.Key("rvstale"), Strategy: strategy.Fenced,
			Stock: 10, LockTTL: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Place(ctx, Request{UserID: "b", ProductID: p.ID, Quantity: 1}); err != nil {
			t.Fatal(err)
		}
		a, err := lockers[dlock.ModeFenced].Lock(ctx, productKey(p.ID), p.LockTTL, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		a.HoldRenewals(time.Minute)
		<-a.Context().Done()
		// B, a newer holder, is refused as a duplicate buyer: its fence rolls back.
		_, errB := s.Place(ctx, Request{UserID: "b", ProductID: p.ID, Quantity: 1})
		var fence int64
		db.Raw("SELECT fence FROM products WHERE id = ?", p.ID).Row().Scan(&fence)
		t.Logf("B: %v; products.fence now %d; A's token %d", errB, fence, a.Fence())
		_, errA := s.buyFenced(ctx, a, p, Request{UserID: "a", ProductID: p.ID, Quantity: 1})
		if !errors.Is(errA, errStaleFence) {
			t.Errorf("stale holder A (token %d, lease expired, a newer holder came after it): got %v, want refused", a.Fence(), errA)
		}
	})
}
