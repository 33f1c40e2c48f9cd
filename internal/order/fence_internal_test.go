package order

import (
	"gorm.io/gorm"

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

// fencedService is a shop with the lua and fenced lockers on b's Redis
// nodes (the dedupe lock and the product lock of a fenced product), and an
// etcd one when b has a cluster, for tests that take the product lock by
// hand.
func fencedService(t *testing.T, b *testenv.Env) (*Service, map[dlock.Mode]dlock.Locker) {
	t.Helper()
	lockers := map[dlock.Mode]dlock.Locker{}
	for _, m := range []dlock.Mode{dlock.ModeLua, dlock.ModeFenced} {
		l, err := dlock.New(m, b.Redis.Clients())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		lockers[m] = l
	}
	if b.Etcd != nil {
		lockers[dlock.ModeEtcd] = dlock.NewEtcd(b.Etcd.Client())
	}
	db := b.DB.DB()
	return NewService(db, stock.NewStore(db), lockers, Options{Logger: slog.New(slog.DiscardHandler)}), lockers
}

// staleHolder takes p's product lock with l, stops its renewals and waits
// for its lease to run out: a holder that has lost the lock without
// knowing it (a GC pause, a stalled network).
func staleHolder(ctx context.Context, t *testing.T, l dlock.Locker, p stock.Product) *dlock.Lock {
	t.Helper()
	a, err := l.Lock(ctx, productKey(p.ID), p.LockTTL, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	a.HoldRenewals(time.Minute)
	select {
	case <-a.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the holder's lease did not run out")
	}
	return a
}

// countOrders counts the orders user has for product.
func countOrders(ctx context.Context, db *gorm.DB, product, user string) (int64, error) {
	var n int64
	err := db.WithContext(ctx).
		Raw("SELECT COUNT(*) FROM orders WHERE product_id = ? AND user_id = ?", product, user).
		Row().Scan(&n)
	return n, err
}
