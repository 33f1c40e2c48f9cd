package redisdecr

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// The cold review's tests of a bucketed order's write: failing after the
// reserve, and meeting the sweep.

// TestBucketsFailedWriteToItsBucket: two buckets of one unit; bucket 0 is
// sold; a buyer of home 0 falls back to bucket 1 and its INSERT fails
// (the database refuses it, not in doubt). The unit must come back to
// bucket 1, once, and sell there.
func TestBucketsFailedWriteToItsBucket(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		p := e.addBucketed(ctx, t, "failed-write", 2, 2)
		pool, _ := e.b.DB.OpenPool(t)
		var fail atomic.Bool
		err := pool.Callback().Create().Before("gorm:create").Register("review:fail", func(tx *gorm.DB) {
			if fail.CompareAndSwap(true, false) {
				_ = tx.AddError(errors.New("review: the INSERT is refused"))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		s := newShop(t, e.b, pool, Options{Stock: e.shop(t, Options{}).res})
		zero := homed("u", 2, 0, 3)
		s.mustPlace(ctx, t, p, zero[0])
		fail.Store(true)
		if err := s.place(ctx, p, zero[1]); err == nil {
			t.Fatal("the refused write: no error")
		}
		testenv.WaitFor(t, 3*settleGrace+time.Second, "the unit back in Redis", func() bool {
			_, rs := e.buckets(ctx, t, p)
			return rs[0]+rs[1] == 1
		})
		e.checkBuckets(ctx, t, p, []int{0, 1})
		if got := s.givenBack.Load(); got != 1 {
			t.Errorf("given back %d times, want 1", got)
		}
		s.mustPlace(ctx, t, p, zero[2])
		e.checkBuckets(ctx, t, p, []int{0, 0})
	})
}

// TestBucketsSweepDuringSlowWrite: a buyer's order from its fallback bucket
// is written while another transaction holds the product's row (a slow
// database), its reservation already past its hold (grace 0); a second
// shop's sweep runs meanwhile, its lowering and its reclaim, queued on the
// row after the write, or before it. Whichever wins the row, the buyer's
// answer, the orders, the database's buckets and Redis's must agree: an
// order and bucket 1 at 0, or ErrUnavailable and bucket 1's unit back.
func TestBucketsSweepDuringSlowWrite(t *testing.T) {
	for _, sweepFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "write-first", true: "sweep-first"}[sweepFirst], func(t *testing.T) {
			eachRedis(t, func(t *testing.T, e bucketEnv) { sweepDuringSlowWrite(t, e, sweepFirst) })
		})
	}
}

// signalled is a pool of e's database that tells on of each statement
// holding marker, before it runs.
func signalled(t *testing.T, e bucketEnv, marker string) (*gorm.DB, chan struct{}) {
	t.Helper()
	pool, _ := e.b.DB.OpenPool(t)
	on := make(chan struct{}, 16)
	err := pool.Callback().Raw().Before("gorm:raw").Register("review:signal", func(tx *gorm.DB) {
		if strings.Contains(tx.Statement.SQL.String(), marker) {
			on <- struct{}{}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return pool, on
}

func sweepDuringSlowWrite(t *testing.T, e bucketEnv, sweepFirst bool) {
	if e.db.Dialector.Name() != "mysql" {
		t.Skip("SQLite: one writer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := e.addBucketed(ctx, t, "slow-write", 2, 2)
	first := e.shop(t, Options{})
	zero := homed("u", 2, 0, 2)
	first.mustPlace(ctx, t, p, zero[0])

	wpool, updating := signalled(t, e, "reclaims = ?")
	writer := newShop(t, e.b, wpool, Options{Stock: first.res})
	writer.reclaimGrace = 0
	spool, taking := signalled(t, e, "SET stock = stock WHERE")
	sweeper := newShop(t, e.b, spool, Options{Stock: first.res})
	sweeper.know(p)

	row := e.db.WithContext(ctx).Begin()
	if err := orderdb.TakeRow(row, p.ID); err != nil {
		t.Fatal(err)
	}
	answer := make(chan error, 1)
	write := func() { go func() { answer <- writer.place(ctx, p, zero[1]) }() }
	swept := make(chan bool, 1)
	sweep := func() { // reconcile's two steps, out of turn
		go func() {
			_ = sweeper.lowerToDatabase(ctx, p.ID)
			pending, _ := sweeper.reclaim(ctx, p.ID, redisstock.Bucket(p.ID, 1, 2))
			swept <- pending
		}()
	}
	if sweepFirst {
		// The reservation is made and due at once, its write held before
		// it starts; the sweep queues on the row, then the write.
		g := newGate(1)
		writer.opts.Work = g.Work
		write()
		<-g.arrived
		sweep()
		<-taking
		close(g.release)
	} else {
		write()
		<-updating
		sweep()
		<-taking
	}
	row.Rollback()
	err := <-answer
	<-swept
	testenv.WaitFor(t, 5*sweepEvery, "Redis's bucket 1 to meet the database's", func() bool {
		db, rs := e.buckets(ctx, t, p)
		return rs[1] == db[1]
	})
	left := e.agree(ctx, t, p)
	n := ordersOf(ctx, t, e.db, p.ID, zero[1])
	switch {
	case err == nil && (n != 1 || left[1] != 0):
		t.Errorf("sold: %d orders, buckets %v; want 1, [0 0]", n, left)
	case errors.Is(err, stock.ErrUnavailable) && (n != 0 || left[1] != 1):
		t.Errorf("reclaimed: %d orders, buckets %v; want 0, [0 1]", n, left)
	case err != nil && !errors.Is(err, stock.ErrUnavailable):
		t.Errorf("the slow write: %v", err)
	}
	t.Logf("the slow write: %v; buckets %v", err, left)
}
