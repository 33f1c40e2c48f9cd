package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestEtcdMemberDown: one etcd member of three stops while the first buyer
// is inside the critical section, and stays down for the rest of the sale.
// Two of three are a quorum: selling goes on, exactly the stock.
func TestEtcdMemberDown(t *testing.T) {
	testenv.SkipShort(t, "a member stopped under a sale; dlock's TestEtcdQuorum checks the lock with a member down")
	const buyerCount, units = 300, 30
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t).Etcd.Reserve()
		h := &hookSleep{}
		h.hook = func(context.Context) { b.Etcd.Stop(0) }
		shops := newShops(t, b, 3, order.Options{LockWait: 30 * time.Second, Sleep: h.Sleep})
		p := newProduct(t, b, "etcd-member-down", stock.Product{Strategy: strategy.Etcd, Stock: units,
			LockTTL: time.Second, Work: time.Millisecond})
		h.armed.Store(true)

		out := rush(t, shops, buyers(p.ID, buyerCount))
		b.Etcd.Start(0)

		if h.armed.Load() {
			t.Fatal("no critical section ran: the member was never stopped")
		}
		if got := out.ok.Load(); got != units {
			t.Errorf("orders placed: got %d, want %d", got, units)
		}
		checkExact(t, audit(t, shops[0], p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.Etcd,
			InitialStock: units, Stock: 0, Orders: units, Sold: units, Consistent: true})
	})
}

// TestEtcdQuorumLost: with two of three members down no lock can be
// granted: an order is refused with a 503 within the lock wait, and
// nothing is written. Once the members are back, the same buyer buys.
func TestEtcdQuorumLost(t *testing.T) {
	testenv.SkipShort(t, "two members stopped under a sale; dlock's TestEtcdQuorum checks the lock without a quorum")
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t).Etcd.Reserve()
		ctx := context.Background()
		const wait = 500 * time.Millisecond
		shop := newShops(t, b, 1, order.Options{LockWait: wait})[0]
		p := newProduct(t, b, "etcd-quorum", stock.Product{Strategy: strategy.Etcd, Stock: 10, LockTTL: time.Second})
		if _, err := shop.Place(ctx, order.Request{UserID: "before", ProductID: p.ID, Quantity: 1}); err != nil {
			t.Fatalf("with every member up: %v", err)
		}

		b.Etcd.Stop(0)
		b.Etcd.Stop(1)
		start := time.Now()
		_, err := shop.Place(ctx, order.Request{UserID: "a", ProductID: p.ID, Quantity: 1})
		took := time.Since(start)
		if !errors.Is(err, order.ErrUnavailable) && !errors.Is(err, order.ErrLockTimeout) {
			t.Errorf("two of three members down: got %v, want %v or %v (a 503)", err, order.ErrUnavailable, order.ErrLockTimeout)
		}
		if took > wait+time.Second {
			t.Errorf("two of three members down: the answer took %v, the lock wait is %v", took, wait)
		}
		t.Logf("two of three members down, after %v: %v", took.Round(time.Millisecond), err)
		checkAudit(t, shop, p.ID, 1)

		// Both back: with one member still paused, a third of the
		// client's requests go to it and wait out the lock wait, and an
		// acquire of several requests may keep meeting it.
		b.Etcd.Start(1)
		b.Etcd.Start(0)
		eventuallyPlace(ctx, t, shop, p.ID, "a")
		checkAudit(t, shop, p.ID, 2)
	})
}
