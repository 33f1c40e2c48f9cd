package order

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
)

// The helpers the internal tests (package order) share.

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
		lockers[etcdlock.Mode] = etcdlock.New(b.Etcd.Client())
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
