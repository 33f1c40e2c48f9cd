package order

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/zklock"
)

// TestZooKeeperRefusesAStaleToken: a holder whose session ended (its node
// is gone, the next buyer has the lock) but who goes on as if it still
// held the lock is refused by the database, before it reads or writes: its
// node's creation zxid is lower than the one the next holders registered.
func TestZooKeeperRefusesAStaleToken(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		z := testenv.NewZooKeeper(t)
		ctx := context.Background()
		p, err := stock.NewStore(b.DB.DB()).Create(ctx, stock.Product{ID: b.Redis.Key("zk-stale"),
			Strategy: strategy.ZooKeeper, Stock: 10, LockTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}

		// The stale holder takes the lock, then loses its session.
		old := zkLocker(t, z)
		stale, err := old.Lock(ctx, productKey(p.ID), time.Second, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		old.Close()
		select {
		case <-stale.Context().Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the lock's context was not cancelled when its session ended")
		}
		if !errors.Is(context.Cause(stale.Context()), zklock.ErrClosed) {
			t.Errorf("the lost lock's cause: got %v, want %v", context.Cause(stale.Context()), zklock.ErrClosed)
		}

		// The next holders sell.
		shop := zkService(t, b, zkLocker(t, z))
		for i := range 3 {
			if _, err := shop.Place(ctx, Request{UserID: "next" + strconv.Itoa(i), ProductID: p.ID, Quantity: 1}); err != nil {
				t.Fatalf("order %d after the session ended: %v", i, err)
			}
		}

		// The stale holder wakes up, unaware (on a context of its own).
		_, err = shop.buy(ctx, stale, p, Request{UserID: "stale", ProductID: p.ID, Quantity: 1})
		if !errors.Is(err, ErrFencedOut) {
			t.Errorf("the stale holder (epoch %d, fence %d): got %v, want %v", stale.Epoch(), stale.Fence(), err, ErrFencedOut)
		}
		a, err := shop.Audit(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Orders != 3 || a.Stock != 7 || !a.Consistent {
			t.Errorf("audit: %d orders, stock %d, consistent %v; want 3, 7, true", a.Orders, a.Stock, a.Consistent)
		}
	})
}

// zkLocker returns a Locker on z's ensemble, under z's root, closed when
// t ends.
func zkLocker(t *testing.T, z *testenv.ZooKeeper) *zklock.Locker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := zklock.New(ctx, z.Servers(), zklock.Options{Root: z.Root()})
	if err != nil {
		t.Fatalf("zklock.New: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// zkService is a Service on b's database that locks zookeeper products
// with l (and their dedupe locks with lua, on b's first Redis node).
func zkService(t *testing.T, b *testenv.Env, l *zklock.Locker) *Service {
	t.Helper()
	lua, err := dlock.New(dlock.ModeLua, b.Redis.Clients())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lua.Close() })
	lockers := map[dlock.Mode]dlock.Locker{dlock.ModeLua: lua, zklock.Mode: l}
	s := NewService(b.DB.DB(), stock.NewStore(b.DB.DB()), lockers, Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { s.Close() })
	return s
}
