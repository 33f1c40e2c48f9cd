package order

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestFenceRefusesStaleHolder plays the pause fencing tokens exist for,
// under both fencing strategies. Holder A takes the product lock and stalls
// before its transaction, the way a process does in a long GC pause: its
// renewals (for etcd, its lease's keep-alives) stop, its lease runs out,
// and B buys with a newer token. Then A wakes up, unaware (it runs on a
// context its lost lock does not cancel), and does its critical section
// with its old token: the database refuses it before it has read or
// written anything, and the stock is B's sale alone.
func TestFenceRefusesStaleHolder(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t)
		for _, name := range []strategy.Name{strategy.Fenced, strategy.Etcd} {
			t.Run(string(name), func(t *testing.T) { refuseStaleHolder(t, b, name) })
		}
	})
}

func refuseStaleHolder(t *testing.T, b *testenv.Env, name strategy.Name) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, lockers := fencedService(t, b)
	db := b.DB.DB()
	p, err := s.AddProduct(ctx, stock.Product{ID: b.Redis.Key("fence-" + string(name)), Strategy: name,
		Stock: 10, LockTTL: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}

	// A takes the lock, then its renewals stop and its lease runs out.
	mode, _ := name.LockMode()
	a := staleHolder(ctx, t, lockers[mode], p)

	// B buys meanwhile, under a newer token.
	if _, err := s.Place(ctx, Request{UserID: "b", ProductID: p.ID, Quantity: 1}); err != nil {
		t.Fatalf("B's order: %v", err)
	}

	// A wakes up and goes on as if it still held the lock.
	_, err = s.buy(ctx, a, p, Request{UserID: "a", ProductID: p.ID, Quantity: 1})
	if !errors.Is(err, ErrFencedOut) {
		t.Fatalf("A's critical section: got %v, want %v", err, ErrFencedOut)
	}
	if got := s.fromCritical(ctx, ctx, p, err); !errors.Is(got, ErrFencedOut) {
		t.Errorf("Place would answer %v, want %v", got, ErrFencedOut)
	}
	t.Logf("A (token %d): %v", a.Fence(), err)
	if n, err := countOrders(ctx, db, p.ID, "a"); err != nil || n != 0 {
		t.Errorf("A's orders: got %d (%v), want 0", n, err)
	}
	audit, err := s.Audit(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if audit.Orders != 1 || audit.Stock != 9 || !audit.Consistent {
		t.Errorf("audit: %d orders, stock %d, consistent %v; want B's order alone: 1, 9, true",
			audit.Orders, audit.Stock, audit.Consistent)
	}
	if got := s.Events(p.ID).FencedOut; got != 1 {
		t.Errorf("Events.FencedOut = %d, want 1", got)
	}
	if err := a.Release(context.WithoutCancel(ctx)); !errors.Is(err, dlock.ErrNotHeld) {
		t.Errorf("A's release: got %v, want %v", err, dlock.ErrNotHeld)
	}
}

// TestFencedSeesPreviousCommit: holder A commits late (its lease ran out
// first); holder B, with a newer token and the same buyer, waits at its
// fence UPDATE and then sees A's stock and A's order: its snapshot is taken
// after the UPDATE, not at BEGIN (REPEATABLE READ).
func TestFencedSeesPreviousCommit(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, lockers := fencedService(t, b)
		p, err := s.AddProduct(ctx, stock.Product{ID: b.Redis.Key("fence-sees-commit"), Strategy: strategy.Fenced,
			Stock: 10, LockTTL: 100 * time.Millisecond, LateCommit: 600 * time.Millisecond, LateCommitEvery: 1})
		if err != nil {
			t.Fatal(err)
		}
		// B starts while A's transaction is open and uncommitted.
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
		_, errB := s.buy(bl.Context(), bl, p, Request{UserID: "same", ProductID: p.ID, Quantity: 1})
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
// (duplicate buyer, sold out) writes nothing else but still commits its
// registration, so the stale holder that comes after it is refused. (A
// newer holder whose transaction rolls back leaves nothing to refuse it:
// TestFenceAfterARolledBackNewerHolder.)
func TestStaleHolderAfterRolledBackFence(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, lockers := fencedService(t, b)
		db := b.DB.DB()
		p, err := s.AddProduct(ctx, stock.Product{ID: b.Redis.Key("fence-stale"), Strategy: strategy.Fenced,
			Stock: 10, LockTTL: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Place(ctx, Request{UserID: "b", ProductID: p.ID, Quantity: 1}); err != nil {
			t.Fatal(err)
		}
		a := staleHolder(ctx, t, lockers[dlock.ModeFenced], p)
		// B, a newer holder, is refused as a duplicate buyer: its fence rolls back.
		_, errB := s.Place(ctx, Request{UserID: "b", ProductID: p.ID, Quantity: 1})
		var fence int64
		db.Raw("SELECT fence FROM products WHERE id = ?", p.ID).Row().Scan(&fence)
		t.Logf("B: %v; products.fence now %d; A's token %d", errB, fence, a.Fence())
		_, errA := s.buy(ctx, a, p, Request{UserID: "a", ProductID: p.ID, Quantity: 1})
		if !errors.Is(errA, ErrFencedOut) {
			t.Errorf("stale holder A (token %d, lease expired, a newer holder came after it): got %v, want refused", a.Fence(), errA)
		}
	})
}

// TestFenceAfterARolledBackNewerHolder: what a fence does not promise. A's
// lease runs out; B gets the lock, registers its newer token, and its buyer
// hangs up during the work: B's transaction rolls back, its registration
// with it. A then registers its older token over the rolled-back one and
// sells: it is not refused, for the fence refuses a stale holder only
// behind a newer registration that committed. Nothing is lost by it: B
// wrote nothing, and A's registration holds the row as any holder's does,
// so the next holder reads after A's sale.
func TestFenceAfterARolledBackNewerHolder(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, lockers := fencedService(t, b)
		db := b.DB.DB()
		p, err := s.AddProduct(ctx, stock.Product{ID: b.Redis.Key("fence-rolled-back"), Strategy: strategy.Fenced,
			Stock: 10, LockTTL: 100 * time.Millisecond, Work: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		a := staleHolder(ctx, t, lockers[dlock.ModeFenced], p)

		// B registers, then its buyer hangs up during the 300 ms of work.
		bctx, bcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, errB := s.Place(bctx, Request{UserID: "b", ProductID: p.ID, Quantity: 1})
		bcancel()
		if errB == nil {
			t.Fatal("B's order went through; the test needs it to roll back")
		}

		// A, stale, goes on as if it still held the lock, and sells.
		if _, err := s.buy(ctx, a, p, Request{UserID: "a", ProductID: p.ID, Quantity: 1}); err != nil {
			t.Fatalf("stale A after B rolled back: %v, want its sale (nothing newer committed)", err)
		}
		// C, the next holder, reads after A's sale.
		if _, err := s.Place(ctx, Request{UserID: "c", ProductID: p.ID, Quantity: 1}); err != nil {
			t.Fatalf("C's order: %v", err)
		}
		audit, err := s.Audit(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if audit.Orders != 2 || audit.Stock != 8 || !audit.Consistent {
			t.Errorf("audit: %d orders, stock %d, consistent %v; want A's and C's: 2, 8, true",
				audit.Orders, audit.Stock, audit.Consistent)
		}
		if n, err := countOrders(ctx, db, p.ID, "b"); err != nil || n != 0 {
			t.Errorf("B's orders: got %d (%v), want 0", n, err)
		}
	})
}
