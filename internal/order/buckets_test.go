package order_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// homedAt returns n user ids whose home bucket of k is home.
func homedAt(home, k, n int) []string {
	var users []string
	for i := 0; len(users) < n; i++ {
		u := "h" + strconv.Itoa(i)
		if orderdb.HomeBucket(u, k) == home {
			users = append(users, u)
		}
	}
	return users
}

// checkBuckets checks that a bucketed product's audit is exact in total
// and bucket by bucket, with sold units sold and one order per buyer.
func checkBuckets(t *testing.T, a order.Audit, k, sold int) {
	t.Helper()
	if a.Sold != sold || a.Orders != sold || a.Oversold != 0 || a.DuplicateOrders != 0 ||
		a.Stock != a.InitialStock-sold || !a.Consistent {
		t.Errorf("audit %+v: want %d sold in %d orders, none oversold or duplicate, consistent", a, sold, sold)
	}
	if len(a.Buckets) != k {
		t.Fatalf("audit has %d buckets, want %d", len(a.Buckets), k)
	}
	for _, b := range a.Buckets {
		if !b.Consistent {
			t.Errorf("bucket %+v: not consistent", b)
		}
	}
}

// TestBucketsFallBack: every buyer's home is bucket 0, which holds one of
// the four units. One after another, all four buy (the last three from
// the other buckets); only then is the fifth told sold out. Without the
// fallback the second buyer would be told sold out with three units left.
func TestBucketsFallBack(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shops := newShops(t, b, 2, order.Options{})
		p := newProduct(t, b, "buckets-fallback", stock.Product{Strategy: strategy.SQLAtomic, Stock: 4, Buckets: 4})
		users := homedAt(0, 4, 5)
		for i, u := range users[:4] {
			if _, err := shops[i%2].Place(ctx, order.Request{UserID: u, ProductID: p.ID, Quantity: 1}); err != nil {
				t.Fatalf("buyer %d of 4, with %d units left: %v", i+1, 4-i, err)
			}
		}
		if _, err := shops[0].Place(ctx, order.Request{UserID: users[4], ProductID: p.ID, Quantity: 1}); !errors.Is(err, order.ErrSoldOut) {
			t.Errorf("the fifth buyer: got %v, want %v", err, order.ErrSoldOut)
		}
		checkBuckets(t, audit(t, shops[0], p.ID), 4, 4)
	})
}

// TestBucketsOneOrderPerBuyer: buyers whose home bucket is empty click
// ten times at once, over three shops: each gets one order, from a
// fallback bucket, and every other click is a duplicate.
func TestBucketsOneOrderPerBuyer(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shops := newShops(t, b, 3, order.Options{})
		// Bucket 0 of 4 holds nothing: 3 units over 4 buckets.
		p := newProduct(t, b, "buckets-clicks", stock.Product{Strategy: strategy.SQLAtomic, Stock: 3, Buckets: 4})
		var reqs []order.Request
		for _, u := range homedAt(3, 4, 3) {
			reqs = append(reqs, clicks(p.ID, u, 10)...)
		}
		out := rush(t, shops, reqs)
		if got, want := out.ok.Load(), int64(3); got != want {
			t.Errorf("orders: got %d, want %d", got, want)
		}
		if got, want := out.dupOrder.Load()+out.dupRequest.Load(), int64(27); got != want {
			t.Errorf("duplicate answers: got %d, want %d (sold out %d)", got, want, out.soldOut.Load())
		}
		checkBuckets(t, audit(t, shops[0], p.ID), 4, 3)
	})
}

// TestBucketsNeverSoldOutEarly: a crowd twice the stock, every buyer
// homed on one bucket, over three shops. The sale sells exactly the
// stock, and no buyer is told sold out before a later buyer's order
// began: that unit was still there when the first was told there was
// none.
func TestBucketsNeverSoldOutEarly(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		const k, units = 4, 20
		shops := newShops(t, b, 3, order.Options{})
		p := newProduct(t, b, "buckets-early", stock.Product{Strategy: strategy.SQLAtomic, Stock: units, Buckets: k})
		users := homedAt(1, k, 2*units)
		var (
			mu           sync.Mutex
			lastSoldOut  time.Time // the first sold-out answer's arrival
			lastOKStart  time.Time // the latest start of a buyer who bought
			sold, refuse int
			failures     = make(chan error, len(users))
			wg           sync.WaitGroup
			start        = make(chan struct{})
		)
		for i, u := range users {
			wg.Go(func() {
				<-start
				began := time.Now()
				_, err := shops[i%3].Place(context.Background(), order.Request{UserID: u, ProductID: p.ID, Quantity: 1})
				ended := time.Now()
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					sold++
					if began.After(lastOKStart) {
						lastOKStart = began
					}
				case errors.Is(err, order.ErrSoldOut):
					refuse++
					if lastSoldOut.IsZero() || ended.Before(lastSoldOut) {
						lastSoldOut = ended
					}
				default:
					failures <- err
				}
			})
		}
		close(start)
		wg.Wait()
		close(failures)
		for err := range failures {
			t.Errorf("a buyer: %v", err)
		}
		if sold != units || refuse != units {
			t.Errorf("got %d sold and %d sold out, want %d and %d", sold, refuse, units, units)
		}
		if lastSoldOut.Before(lastOKStart) {
			t.Errorf("a buyer was told sold out %v before a later buyer's order began", lastOKStart.Sub(lastSoldOut))
		}
		checkBuckets(t, audit(t, shops[0], p.ID), k, units)
	})
}
