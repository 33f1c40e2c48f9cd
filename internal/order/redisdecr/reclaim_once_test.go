package redisdecr

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/google/uuid"
)

// TestReclaimOnce: reservations of shops that died right after their
// takes are swept by many shops at once, many times, while the owners of
// some of them give theirs back too (a settlement that came through):
// each unit comes back exactly once, and the ledger is empty. They are
// long past their hold (stuck), so every sweep settles them, in its
// shop's turn or not.
func TestReclaimOnce(t *testing.T) {
	const units, dead, shops, sweeps = 40, 30, 6, 4
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		db := b.DB.DB()
		all := make([]*shop, shops)
		for i := range all {
			all[i] = newShop(t, b, db, Options{})
		}
		p := addProduct(ctx, t, b, db, "reclaim-once", stock.Product{Stock: units})
		res := redisstock.New(b.Redis.Clients()[0])
		for i := range dead {
			if _, err := res.Take(ctx, p.ID, "d"+strconv.Itoa(i), uuid.NewString(), 1, -time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		due, _, err := res.Due(ctx, p.ID, units)
		if err != nil || len(due) != dead {
			t.Fatalf("Due: %d reservations, %v; want %d", len(due), err, dead)
		}

		var owners sync.WaitGroup
		var ownersGave atomic.Int64
		start := make(chan struct{})
		for i, r := range due {
			if i%3 != 0 {
				continue
			}
			owners.Go(func() {
				<-start
				held, err := res.GiveBack(ctx, p.ID, r.Buyer, r.ID, r.Quantity)
				if err != nil {
					t.Errorf("the owner's give-back: %v", err)
				}
				if held {
					ownersGave.Add(1)
				}
			})
		}
		for _, s := range all {
			for range sweeps {
				owners.Go(func() {
					<-start
					s.reconcile(ctx, p.ID)
				})
			}
		}
		close(start)
		owners.Wait()
		for _, s := range all { // what a sweep cut short left
			s.reconcile(ctx, p.ID)
		}

		var reclaimed int64
		for _, s := range all {
			reclaimed += s.reclaimed.Load()
		}
		if reclaimed+ownersGave.Load() != dead {
			t.Errorf("given back %d by the sweeps and %d by the owners, want %d in all", reclaimed, ownersGave.Load(), dead)
		}
		checkExact(ctx, t, b, db, p, 0)
		checkLedger(t, b, p.ID, 0)
		if n := reclaimedRows(t, db, p.ID); n < reclaimed || n > dead {
			t.Errorf("reclaimed rows: %d, want %d to %d", n, reclaimed, dead)
		}
	})
}

// TestReclaimKeepsSoldOrders: a sweep never gives back a unit whose order
// is written, however long ago its hold ran out: the sold reservations
// leave the ledger, their buyers stay buyers, and Redis agrees with the
// database.
func TestReclaimKeepsSoldOrders(t *testing.T) {
	const units, sold = 10, 6
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		db := b.DB.DB()
		shop := newShop(t, b, db, Options{})
		shop.reclaimGrace = 0 // every reservation is due at its take
		p := addProduct(ctx, t, b, db, "reclaim-sold", stock.Product{Stock: units})
		for i := range sold {
			shop.mustPlace(ctx, t, p, "u"+strconv.Itoa(i))
		}
		for range 3 {
			shop.reconcile(ctx, p.ID)
		}
		if got := shop.reclaimed.Load(); got != 0 {
			t.Errorf("reclaimed %d, want 0", got)
		}
		checkLedger(t, b, p.ID, 0)
		if err := shop.place(ctx, p, "u0"); !errors.Is(err, orderdb.ErrDuplicateOrder) {
			t.Errorf("u0 again: got %v, want %v", err, orderdb.ErrDuplicateOrder)
		}
		checkExact(ctx, t, b, db, p, sold)
	})
}

// dieAfterTake is a shop, with grace as its reclaimGrace, killed while
// it sells a unit of p to user: its take is done, and then nothing,
// neither the database write nor a give-back, as under SIGKILL (the
// goroutine placing the order ends). Its sweep dies with it.
