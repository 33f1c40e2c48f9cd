package order_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/reserve"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// Tests of the sweep's second step, which gives back the redis-decr
// reservations whose hold ran out with no order written (reserved_reclaim.go).

// reclaimGrace and sweepEvery as reserved_reclaim.go and reserved_reconcile.go have them:
// a reservation of a product with no work and no stall is back within
// their sum of its take, and a sweep's own time.
const (
	reclaimGrace = 5 * time.Second
	sweepEvery   = time.Second
)

// TestReclaimDeadShop is the loss a review found: a shop dies between its
// Redis take and its database write (here its goroutine ends right after
// the take: no write, no give-back, as under SIGKILL), having sold the
// last of 5 units in Redis. Redis says 0, the database 1: drift -1, and
// nobody asks for the product again. The other shop, which sold the first
// four, sweeps it and gives the unit back within the hold and a sweep;
// then it sells.
func TestReclaimDeadShop(t *testing.T) {
	testenv.SkipShort(t, "waits out the 5 s reclaim grace; TestReclaimAfterRestart checks the sweep's give-back without it")
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		survivor := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "reclaim-dead", stock.Product{Strategy: strategy.RedisDecr, Stock: 5})
		for i := range 4 {
			mustPlace(ctx, t, survivor, p.ID, "u"+strconv.Itoa(i))
		}

		took := time.Now()
		dieAfterTake(ctx, t, b, reclaimGrace, p.ID, "x")
		if a := audit(t, survivor, p.ID); a.RedisStock == nil || *a.RedisStock != 0 || a.Stock != 1 {
			t.Fatalf("after the crash: Redis %v, database %d; want 0, 1", deref(a.RedisStock), a.Stock)
		}

		waitFor(t, reclaimGrace+2*sweepEvery, "the sweep to give the dead shop's unit back", func() bool {
			a := audit(t, survivor, p.ID)
			return a.RedisStock != nil && a.Drift == 0
		})
		t.Logf("drift 0 after %v", time.Since(took).Round(10*time.Millisecond))
		if got := survivor.Events(p.ID).Reclaimed; got != 1 {
			t.Errorf("Events.Reclaimed = %d, want 1", got)
		}
		mustPlace(ctx, t, survivor, p.ID, "y")
		checkExact(t, audit(t, survivor, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: 5, Stock: 0, Orders: 5, Sold: 5, Consistent: true})
	})
}

// TestReclaimAfterRestart: the only shop selling a product dies right
// after taking its last unit in Redis, and starts again. The restarted
// shop knows nothing of the reservation; asked for the product (sold out,
// as Redis says), it sweeps it, and gives the unit back.
func TestReclaimAfterRestart(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		p := newProduct(t, b, "reclaim-restart", stock.Product{Strategy: strategy.RedisDecr, Stock: 1})
		dieAfterTake(ctx, t, b, 0, p.ID, "x") // its reservation is due at once

		restarted := newShops(t, b, 1, order.Options{})[0]
		if _, err := restarted.Place(ctx, order.Request{UserID: "y", ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrSoldOut) {
			t.Fatalf("y, while the dead shop's reservation holds the unit: got %v, want %v", err, order.ErrSoldOut)
		}
		waitFor(t, 3*sweepEvery, "the restarted shop's sweep to give the unit back", func() bool {
			return restarted.Events(p.ID).Reclaimed == 1
		})
		mustPlace(ctx, t, restarted, p.ID, "y")
		checkExact(t, audit(t, restarted, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: 1, Stock: 0, Orders: 1, Sold: 1, Consistent: true})
	})
}

// TestReclaimPastBrokenShop: the shops take turns at settling a ledger,
// and a shop whose database is gone (its pool closed: every query fails at
// once) still sweeps the product it sold, and asks for the turn first in
// every round (it was asked for the product first, so its ticker runs a
// few milliseconds ahead of the other's). It takes every turn and settles
// nothing; a dead shop's reservation must come back all the same, from
// the healthy shop, once it is stuck (sweepStuck past its hold).
func TestReclaimPastBrokenShop(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		pool, _ := b.DB.OpenPool(t)
		broken := shopOn(t, b, pool, order.Options{})
		p := newProduct(t, b, "reclaim-broken", stock.Product{Strategy: strategy.RedisDecr, Stock: 3})
		mustPlace(ctx, t, broken, p.ID, "a") // broken sweeps p from now on, first
		survivor := newShops(t, b, 1, order.Options{})[0]
		mustPlace(ctx, t, survivor, p.ID, "b") // and survivor just after
		sqlDB, err := pool.DB()
		if err != nil {
			t.Fatal(err)
		}
		sqlDB.Close()

		took := time.Now()
		dieAfterTake(ctx, t, b, 0, p.ID, "x") // due at once
		waitFor(t, 5*sweepEvery, "the healthy shop to give the dead shop's unit back", func() bool {
			return survivor.Events(p.ID).Reclaimed == 1
		})
		t.Logf("given back after %v", time.Since(took).Round(10*time.Millisecond))
		mustPlace(ctx, t, survivor, p.ID, "y")
		checkExact(t, audit(t, survivor, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: 3, Stock: 0, Orders: 3, Sold: 3, Consistent: true})
	})
}

// TestReclaimRefusesSlowShop: the shop is not dead but slow (a GC pause, a
// stalled network), and its write comes after the sweep has reclaimed its
// reservation. The database refuses it: the buyer is told ErrUnavailable,
// not 201, no order is written, and the unit, given back once, sells to
// someone (the same buyer, trying again).
func TestReclaimRefusesSlowShop(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		survivor := newShops(t, b, 1, order.Options{})[0]
		paused, resume := make(chan struct{}), make(chan struct{})
		h := &hookSleep{hook: func(context.Context) { close(paused); <-resume }}
		slow := shopOn(t, b, b.DB.DB(), order.Options{Sleep: h.Sleep})
		slow.SetReclaimGrace(0) // its reservation is due at once
		p := newProduct(t, b, "reclaim-slow", stock.Product{Strategy: strategy.RedisDecr, Stock: 2})
		mustPlace(ctx, t, survivor, p.ID, "a") // the survivor sweeps p from now on

		h.armed.Store(true)
		answer := make(chan error, 1)
		go func() {
			_, err := slow.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
			answer <- err
		}()
		<-paused
		waitFor(t, 3*sweepEvery, "a sweep to reclaim the slow shop's reservation", func() bool {
			return survivor.Events(p.ID).Reclaimed+slow.Events(p.ID).Reclaimed == 1
		})
		close(resume)
		if err := <-answer; !errors.Is(err, order.ErrUnavailable) {
			t.Errorf("the slow shop's order: got %v, want %v", err, order.ErrUnavailable)
		}
		if n := ordersOf(t, b, p.ID, "x"); n != 0 {
			t.Errorf("x has %d orders after the refusal, want 0", n)
		}
		if got := slow.Events(p.ID).GivenBack + survivor.Events(p.ID).GivenBack; got != 0 {
			t.Errorf("given back %d times more after the sweep's, want 0", got)
		}
		a := audit(t, survivor, p.ID)
		if a.RedisStock == nil || a.Drift != 0 || a.Stock != 1 {
			t.Errorf("after the refusal: Redis %v, database %d, drift %d; want 1, 1, 0", deref(a.RedisStock), a.Stock, a.Drift)
		}
		mustPlace(ctx, t, survivor, p.ID, "x")
		checkExact(t, audit(t, survivor, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: 2, Stock: 0, Orders: 2, Sold: 2, Consistent: true})
	})
}

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
		all := newShops(t, b, shops, order.Options{})
		p := newProduct(t, b, "reclaim-once", stock.Product{Strategy: strategy.RedisDecr, Stock: units})
		res := reserve.New(b.Redis.Clients()[0])
		for i := range dead {
			if _, err := res.Take(ctx, p.ID, "d"+strconv.Itoa(i), randomID(), 1, -time.Minute); err != nil {
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
					s.Reconcile(ctx, p.ID)
				})
			}
		}
		close(start)
		owners.Wait()
		for _, s := range all { // what a sweep cut short left
			s.Reconcile(ctx, p.ID)
		}

		var reclaimed int64
		for _, s := range all {
			reclaimed += s.Events(p.ID).Reclaimed
		}
		if reclaimed+ownersGave.Load() != dead {
			t.Errorf("given back %d by the sweeps and %d by the owners, want %d in all", reclaimed, ownersGave.Load(), dead)
		}
		checkExact(t, audit(t, all[0], p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: units, Stock: units, Consistent: true})
		checkLedger(t, b, p.ID, 0)
		if n := reclaimedRows(t, b, p.ID); n < reclaimed || n > dead {
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
		shop := newShops(t, b, 1, order.Options{})[0]
		shop.SetReclaimGrace(0) // every reservation is due at its take
		p := newProduct(t, b, "reclaim-sold", stock.Product{Strategy: strategy.RedisDecr, Stock: units})
		for i := range sold {
			mustPlace(ctx, t, shop, p.ID, "u"+strconv.Itoa(i))
		}
		for range 3 {
			shop.Reconcile(ctx, p.ID)
		}
		if got := shop.Events(p.ID).Reclaimed; got != 0 {
			t.Errorf("Events.Reclaimed = %d, want 0", got)
		}
		checkLedger(t, b, p.ID, 0)
		if _, err := shop.Place(ctx, order.Request{UserID: "u0", ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrDuplicateOrder) {
			t.Errorf("u0 again: got %v, want %v", err, order.ErrDuplicateOrder)
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisDecr,
			InitialStock: units, Stock: units - sold, Orders: sold, Sold: sold, Consistent: true})
	})
}

// dieAfterTake is a shop, with grace as its reclaimGrace, killed while
// it sells a unit of product to user: its take is done, and then nothing,
// neither the database write nor a give-back, as under SIGKILL (the
// goroutine placing the order ends). Its sweep dies with it.
func dieAfterTake(ctx context.Context, t *testing.T, b *testenv.Env, grace time.Duration, product, user string) {
	t.Helper()
	h := &hookSleep{hook: func(context.Context) { runtime.Goexit() }}
	shop := shopOn(t, b, b.DB.DB(), order.Options{Sleep: h.Sleep})
	shop.SetReclaimGrace(grace)
	h.armed.Store(true)
	died := make(chan struct{})
	go func() {
		defer close(died)
		shop.Place(ctx, order.Request{UserID: user, ProductID: product, Quantity: 1})
	}()
	<-died
	shop.Close()
}

// checkLedger checks how many reservations product's ledger holds.
func checkLedger(t *testing.T, b *testenv.Env, product string, want int) {
	t.Helper()
	_, n, err := reserve.New(b.Redis.Clients()[0]).Due(context.Background(), product, 1)
	if err != nil || n != want {
		t.Errorf("ledger: %d reservations (%v), want %d", n, err, want)
	}
}

// ordersOf counts user's orders of product.
func ordersOf(t *testing.T, b *testenv.Env, product, user string) int64 {
	t.Helper()
	var n int64
	err := b.DB.DB().Raw("SELECT COUNT(*) FROM orders WHERE product_id = ? AND user_id = ?", product, user).Row().Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// reclaimedRows counts product's rows in table reclaimed.
func reclaimedRows(t *testing.T, b *testenv.Env, product string) int64 {
	t.Helper()
	var n int64
	if err := b.DB.DB().Raw("SELECT COUNT(*) FROM reclaimed WHERE product_id = ?", product).Row().Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
