package redisdecr

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// The cold review's tests of redis-decr over buckets: the corners the
// bucket tests do not reach, each on one Redis and on the Redis Cluster.

// TestBucketsTwoClicksTwoBuckets: one buyer's two clicks reserved in two
// buckets at once (the first fell back to bucket 1 while bucket 0 was out
// on d's reservation; d left, and the second click found bucket 0's unit),
// both held before their writes, then written together (one group). One
// order; the other click is told duplicate, its unit back in its own
// bucket; the buckets agree, and the unit left sells.
func TestBucketsTwoClicksTwoBuckets(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		p := e.addBucketed(ctx, t, "two-clicks", 2, 2)
		dg, ug := newGate(1), newGate(2)
		dShop, uShop := e.shop(t, Options{Work: dg.Work}), e.shop(t, Options{Work: ug.Work})
		zero := homed("u", 2, 0, 2)
		d, u := zero[0], zero[1]

		leaveD, dAnswer := held(ctx, dShop, dg, p, d) // bucket 0
		_, first := held(ctx, uShop, ug, p, u)        // bucket 1
		leaveD()
		if err := <-dAnswer; !errors.Is(err, context.Canceled) {
			t.Fatalf("d, who left: %v", err)
		}
		_, second := held(ctx, uShop, ug, p, u) // bucket 0, given back by d
		if _, rs := e.buckets(ctx, t, p); rs[0] != 0 || rs[1] != 0 {
			t.Fatalf("setup: Redis %v with both clicks held, want [0 0]", rs)
		}
		close(ug.release)
		a, b := <-first, <-second
		var dup *orderdb.DuplicateOrderError
		ok := a == nil && errors.As(b, &dup) || b == nil && errors.As(a, &dup)
		if !ok {
			t.Errorf("u's clicks: %v and %v, want one order and one duplicate", a, b)
		}
		if n := ordersOf(ctx, t, e.db, p.ID, u); n != 1 {
			t.Errorf("u has %d orders, want 1", n)
		}
		if left := e.agree(ctx, t, p); left[0]+left[1] != 1 {
			t.Errorf("buckets %v after u's order, want one unit left", left)
		}
		e.shop(t, Options{}).mustPlace(ctx, t, p, "last")
		e.checkBuckets(ctx, t, p, []int{0, 0})
	})
}

// TestBucketsRefillWhileEmptied: three buckets of one unit, each out on a
// reservation held before its write (three buyers of home 0, the second
// and third falling back). The one in bucket 2 leaves: its unit goes back
// to bucket 2 while buckets 0 and 1 stay empty. A fourth buyer of home 0
// must find it there (not be told sold out), and a fifth is sold out.
func TestBucketsRefillWhileEmptied(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		p := e.addBucketed(ctx, t, "refill", 3, 3)
		g := newGate(3)
		s := e.shop(t, Options{Work: g.Work})
		zero := homed("u", 3, 0, 5)
		var leaves []func()
		var answers []chan error
		for _, u := range zero[:3] {
			leave, a := held(ctx, s, g, p, u)
			leaves, answers = append(leaves, leave), append(answers, a)
		}
		if _, rs := e.buckets(ctx, t, p); rs[0]+rs[1]+rs[2] != 0 {
			t.Fatalf("setup: Redis %v, want every unit out", rs)
		}
		leaves[2]()
		if err := <-answers[2]; !errors.Is(err, context.Canceled) {
			t.Fatalf("the third, who left: %v", err)
		}
		if _, rs := e.buckets(ctx, t, p); rs[2] != 1 {
			t.Fatalf("Redis %v after the third left, want its unit in bucket 2", rs)
		}
		other := e.shop(t, Options{})
		if err := other.place(ctx, p, zero[3]); err != nil {
			t.Errorf("a buyer of home 0 with bucket 2's unit back: %v, want it sold", err)
		}
		close(g.release)
		for i, a := range answers[:2] {
			if err := <-a; err != nil {
				t.Errorf("buyer %d: %v", i, err)
			}
		}
		if err := other.place(ctx, p, zero[4]); !errors.Is(err, stock.ErrSoldOut) {
			t.Errorf("a fifth buyer: %v, want sold out", err)
		}
		e.checkBuckets(ctx, t, p, []int{0, 0, 0})
	})
}

// TestBucketsSoldOutOnlyFarBucket: four buckets; the three a buyer tries
// first are sold, only the last one it tries (home-1) holds a unit, and
// Redis has lost that bucket's key (or never had it: its Load failed).
// The buyer must buy it, the bucket loaded from the database's count;
// the next is told sold out.
func TestBucketsSoldOutOnlyFarBucket(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		const k = 4
		p := e.addBucketed(ctx, t, "far", k, k)
		s := e.shop(t, Options{})
		home, far := 1, 0
		for b := range k {
			if b != far {
				s.mustPlace(ctx, t, p, homed("b", k, b, 1)[0])
			}
		}
		name := redisstock.Bucket(p.ID, far, k)
		if err := e.redis.Del(ctx, "flashsale:stock:{"+name+"}").Err(); err != nil {
			t.Fatal(err)
		}
		late := homed("late", k, home, 2)
		if err := s.place(ctx, p, late[0]); err != nil {
			t.Errorf("a buyer whose last bucket holds the last unit: %v, want it sold", err)
		}
		if err := s.place(ctx, p, late[1]); !errors.Is(err, stock.ErrSoldOut) {
			t.Errorf("the next: %v, want sold out", err)
		}
		e.checkBuckets(ctx, t, p, []int{0, 0, 0, 0})
	})
}

// TestBucketsLostKeyDriftSwept: Redis loses bucket 0's stock key while a
// reservation of it is on its way (a failover that lost the newest
// writes). The next buyer of home 0 reloads the bucket from the
// database's count, which still holds the unit on its way, and both
// orders of bucket 0 are written: bucket 0 sold 2 of its share of 1, the
// database's total stops the sale at 2. Bucket 1's unit is then a phantom
// (the database has none left), and the sweep, whose job is to lower
// Redis to the database after such a loss, must lower it.
func TestBucketsLostKeyDriftSwept(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		p := e.addBucketed(ctx, t, "lost-key", 2, 2)
		g := newGate(1)
		slow, s := e.shop(t, Options{Work: g.Work}), e.shop(t, Options{})
		zero := homed("u", 2, 0, 2)
		_, answer := held(ctx, slow, g, p, zero[0]) // bucket 0
		name := redisstock.Bucket(p.ID, 0, 2)
		if err := e.redis.Del(ctx, "flashsale:stock:{"+name+"}").Err(); err != nil {
			t.Fatal(err)
		}
		s.mustPlace(ctx, t, p, zero[1]) // bucket 0 again, reloaded at 1
		close(g.release)
		if err := <-answer; err != nil {
			t.Fatalf("the held order: %v", err)
		}
		if got := stockOf(ctx, t, e.db, p.ID); got != 0 {
			t.Fatalf("setup: the database's stock %d, want 0", got)
		}
		s.reconcile(ctx, p.ID)
		if _, rs := e.buckets(ctx, t, p); rs[0]+rs[1] != 0 {
			t.Errorf("Redis's buckets %v after the sweep, the database's stock 0: phantom units left", rs)
		}
	})
}

// TestBucketsSoldOutOver256: the cost of a sold-out answer of a product of
// stock.MaxBuckets buckets, every bucket tried (logged, not checked): the
// shop's first (which names the buckets), then the next.
func TestBucketsSoldOutOver256(t *testing.T) {
	eachRedis(t, func(t *testing.T, e bucketEnv) {
		ctx := context.Background()
		p := e.addBucketed(ctx, t, "cost", 256, 256)
		s := e.shop(t, Options{})
		for b := range 256 {
			if err := e.redis.Set(ctx, "flashsale:stock:{"+redisstock.Bucket(p.ID, b, 256)+"}", 0, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for _, u := range []string{"x", "y"} {
			start := time.Now()
			if err := s.place(ctx, p, u); !errors.Is(err, stock.ErrSoldOut) {
				t.Fatalf("got %v", err)
			}
			t.Logf("a sold-out answer over 256 buckets (%s): %v", u, time.Since(start))
		}
	})
}
