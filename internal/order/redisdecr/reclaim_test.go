package redisdecr

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"gorm.io/gorm"
)

// Tests of the sweep's second step, which gives back the redis-decr
// reservations whose hold ran out with no order written (reclaim.go). A
// reservation of a product with no work and no stall is back within
// reclaimGrace and a sweepEvery of its take, and a sweep's own time.

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
		db := b.DB.DB()
		survivor := newShop(t, b, db, Options{})
		p := addProduct(ctx, t, b, db, "reclaim-dead", stock.Product{Stock: 5})
		for i := range 4 {
			survivor.mustPlace(ctx, t, p, "u"+strconv.Itoa(i))
		}

		took := time.Now()
		dieAfterTake(ctx, t, b, reclaimGrace, p, "x")
		if f := audit(ctx, t, b, db, p); f.Redis == nil || *f.Redis != 0 || f.Stock != 1 {
			t.Fatalf("after the crash: Redis %v, database %d; want 0, 1", deref(f.Redis), f.Stock)
		}

		// The sweep gives the unit back in Redis, then counts it: wait for
		// both, or the count may be read in between.
		testenv.WaitFor(t, reclaimGrace+2*sweepEvery, "the sweep to give the dead shop's unit back", func() bool {
			return !audit(ctx, t, b, db, p).drifted() && survivor.reclaimed.Load() > 0
		})
		t.Logf("drift 0 after %v", time.Since(took).Round(10*time.Millisecond))
		if got := survivor.reclaimed.Load(); got != 1 {
			t.Errorf("reclaimed %d, want 1", got)
		}
		survivor.mustPlace(ctx, t, p, "y")
		checkExact(ctx, t, b, db, p, 5)
	})
}

// TestReclaimAfterRestart: the only shop selling a product dies right
// after taking its last unit in Redis, and starts again. The restarted
// shop knows nothing of the reservation; asked for the product (sold out,
// as Redis says), it sweeps it, and gives the unit back.
func TestReclaimAfterRestart(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		db := b.DB.DB()
		p := addProduct(ctx, t, b, db, "reclaim-restart", stock.Product{Stock: 1})
		dieAfterTake(ctx, t, b, 0, p, "x") // its reservation is due at once

		restarted := newShop(t, b, db, Options{})
		if err := restarted.place(ctx, p, "y"); !errors.Is(err, stock.ErrSoldOut) {
			t.Fatalf("y, while the dead shop's reservation holds the unit: got %v, want %v", err, stock.ErrSoldOut)
		}
		testenv.WaitFor(t, 3*sweepEvery, "the restarted shop's sweep to give the unit back", func() bool {
			return restarted.reclaimed.Load() == 1
		})
		restarted.mustPlace(ctx, t, p, "y")
		checkExact(ctx, t, b, db, p, 1)
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
		db := b.DB.DB()
		pool, _ := b.DB.OpenPool(t)
		broken := newShop(t, b, pool, Options{})
		p := addProduct(ctx, t, b, db, "reclaim-broken", stock.Product{Stock: 3})
		broken.mustPlace(ctx, t, p, "a") // broken sweeps p from now on, first
		survivor := newShop(t, b, db, Options{})
		survivor.mustPlace(ctx, t, p, "b") // and survivor just after
		sqlDB, err := pool.DB()
		if err != nil {
			t.Fatal(err)
		}
		sqlDB.Close()

		took := time.Now()
		dieAfterTake(ctx, t, b, 0, p, "x") // due at once
		testenv.WaitFor(t, 5*sweepEvery, "the healthy shop to give the dead shop's unit back", func() bool {
			return survivor.reclaimed.Load() == 1
		})
		t.Logf("given back after %v", time.Since(took).Round(10*time.Millisecond))
		survivor.mustPlace(ctx, t, p, "y")
		checkExact(ctx, t, b, db, p, 3)
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
		db := b.DB.DB()
		survivor := newShop(t, b, db, Options{})
		paused, resume := make(chan struct{}), make(chan struct{})
		h := &hookWork{hook: func(context.Context) { close(paused); <-resume }}
		slow := newShop(t, b, db, Options{Work: h.Work})
		slow.reclaimGrace = 0 // its reservation is due at once
		p := addProduct(ctx, t, b, db, "reclaim-slow", stock.Product{Stock: 2})
		survivor.mustPlace(ctx, t, p, "a") // the survivor sweeps p from now on

		h.armed.Store(true)
		answer := make(chan error, 1)
		go func() { answer <- slow.place(ctx, p, "x") }()
		<-paused
		testenv.WaitFor(t, 3*sweepEvery, "a sweep to reclaim the slow shop's reservation", func() bool {
			return survivor.reclaimed.Load()+slow.reclaimed.Load() == 1
		})
		close(resume)
		if err := <-answer; !errors.Is(err, stock.ErrUnavailable) {
			t.Errorf("the slow shop's order: got %v, want %v", err, stock.ErrUnavailable)
		}
		if n := ordersOf(ctx, t, db, p.ID, "x"); n != 0 {
			t.Errorf("x has %d orders after the refusal, want 0", n)
		}
		if got := slow.givenBack.Load() + survivor.givenBack.Load(); got != 0 {
			t.Errorf("given back %d times more after the sweep's, want 0", got)
		}
		if f := audit(ctx, t, b, db, p); f.drifted() || f.Stock != 1 {
			t.Errorf("after the refusal: Redis %v, database %d; want 1, 1", deref(f.Redis), f.Stock)
		}
		survivor.mustPlace(ctx, t, p, "x")
		checkExact(ctx, t, b, db, p, 2)
	})
}

func dieAfterTake(ctx context.Context, t *testing.T, b *testenv.Env, grace time.Duration, p stock.Product, user string) {
	t.Helper()
	h := &hookWork{hook: func(context.Context) { runtime.Goexit() }}
	shop := newShop(t, b, b.DB.DB(), Options{Work: h.Work})
	shop.reclaimGrace = grace
	h.armed.Store(true)
	died := make(chan struct{})
	go func() {
		defer close(died)
		shop.place(ctx, p, user)
	}()
	<-died
	shop.Close()
}

// checkLedger checks how many reservations product's ledger holds.
func checkLedger(t *testing.T, b *testenv.Env, product string, want int) {
	t.Helper()
	_, n, err := redisstock.New(b.Redis.Clients()[0]).Due(context.Background(), product, 1)
	if err != nil || n != want {
		t.Errorf("ledger: %d reservations (%v), want %d", n, err, want)
	}
}

// reclaimedRows counts product's rows in table reclaimed.
func reclaimedRows(t *testing.T, db *gorm.DB, product string) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT COUNT(*) FROM reclaimed WHERE product_id = ?", product).Row().Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
