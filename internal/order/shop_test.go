package order_test

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/reserve"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/testenv"
)

// newShops builds n simulated shop processes on b: each has its own Redis
// clients and its own lockers (one per mode, and an etcd one on its own
// client when b has a cluster), and all share the database.
func newShops(t *testing.T, b *testenv.Env, n int, opts order.Options) []*order.Service {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	shops := make([]*order.Service, n)
	for i := range shops {
		clients := b.Redis.Clients()
		lockers := make(map[dlock.Mode]dlock.Locker)
		for _, m := range dlock.Modes() {
			l, err := dlock.New(m, clients)
			if err != nil {
				t.Fatalf("dlock.New(%s): %v", m, err)
			}
			t.Cleanup(func() { l.Close() })
			lockers[m] = l
		}
		if b.Etcd != nil {
			lockers[dlock.ModeEtcd] = dlock.NewEtcd(b.Etcd.Client())
		}
		opts := opts
		opts.Reservations = reserve.New(clients[0])
		shops[i] = order.NewService(b.DB.DB(), stock.NewStore(b.DB.DB()), lockers, opts)
		t.Cleanup(func() { shops[i].Close() })
	}
	return shops
}

// products numbers the products of a test run, so that their ids are unique.
var products atomic.Int64

// newProduct creates p with an id unique to this test (so that its Redis
// keys are too), made of b's key prefix, name and a number, as a shop does
// (AddProduct: a redis-decr product's stock is loaded into Redis), and
// returns it as stored.
func newProduct(t *testing.T, b *testenv.Env, name string, p stock.Product) stock.Product {
	t.Helper()
	p.ID = b.Redis.Key(name + "-" + strconv.FormatInt(products.Add(1), 10))
	clients := b.Redis.Clients()
	opts := order.Options{Reservations: reserve.New(clients[0])}
	got, err := order.NewService(b.DB.DB(), stock.NewStore(b.DB.DB()), nil, opts).AddProduct(context.Background(), p)
	if err != nil {
		t.Fatalf("create product %s: %v", p.ID, err)
	}
	return got
}

// outcomes counts how a rush of Place calls ended.
type outcomes struct {
	ok, soldOut, dupOrder, dupRequest, other atomic.Int64
}

// doorSize is how many Place calls rush lets run at once per shop, as a
// server's worker limit would. Without a door the first instant of a rush
// is 500 dedupe locks at once, for redlock 2,500 SETs, which on the embedded
// nodes (five miniredis servers sharing two cores with everything else)
// outlasts Redlock's per-node timeout.
const doorSize = 4

// maxTries bounds how often a buyer who was told ErrUnavailable tries again,
// as a client honouring Retry-After would. Nothing is written when Place
// says ErrUnavailable, so a retry cannot double an order; the retries are
// counted and logged.
const maxTries = 20

// rush starts one goroutine per request, all at once, spread over shops
// round-robin, at most doorSize per shop inside Place at a time, and waits
// for them. A buyer told ErrUnavailable retries after a short random pause.
// Other errors than the sold-out and duplicate answers are failures,
// reported on the test's goroutine.
func rush(t *testing.T, shops []*order.Service, reqs []order.Request) *outcomes {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		out      outcomes
		retries  atomic.Int64
		wg       sync.WaitGroup
		start    = make(chan struct{})
		failures = make(chan error, len(reqs))
		doors    = make([]chan struct{}, len(shops))
	)
	for i := range doors {
		doors[i] = make(chan struct{}, doorSize)
	}
	for i, req := range reqs {
		shop, door := shops[i%len(shops)], doors[i%len(shops)]
		wg.Go(func() {
			<-start
			var err error
			for try := 1; try <= maxTries; try++ {
				door <- struct{}{}
				_, err = shop.Place(ctx, req)
				<-door
				if !errors.Is(err, order.ErrUnavailable) || try == maxTries {
					break
				}
				if retries.Add(1) <= 3 {
					t.Logf("retry after: %.300v", err.Error())
				}
				time.Sleep(10*time.Millisecond + rand.N(40*time.Millisecond))
			}
			switch {
			case err == nil:
				out.ok.Add(1)
			case errors.Is(err, order.ErrSoldOut):
				out.soldOut.Add(1)
			case errors.Is(err, order.ErrDuplicateOrder):
				out.dupOrder.Add(1)
			case errors.Is(err, order.ErrDuplicateRequest):
				out.dupRequest.Add(1)
			default:
				out.other.Add(1)
				failures <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(failures)
	n := 0
	for err := range failures {
		if n++; n <= 5 {
			t.Errorf("Place: unexpected error: %v", err)
		}
	}
	if n > 5 {
		t.Errorf("... and %d more unexpected errors", n-5)
	}
	if r := retries.Load(); r > 0 {
		t.Logf("%d retries after ErrUnavailable", r)
	}
	return &out
}

// buyers returns n requests for one unit of product, by distinct users.
func buyers(product string, n int) []order.Request {
	reqs := make([]order.Request, n)
	for i := range reqs {
		reqs[i] = order.Request{UserID: "u" + strconv.Itoa(i), ProductID: product, Quantity: 1}
	}
	return reqs
}

// clicks returns n identical requests by one user.
func clicks(product, user string, n int) []order.Request {
	reqs := make([]order.Request, n)
	for i := range reqs {
		reqs[i] = order.Request{UserID: user, ProductID: product, Quantity: 1}
	}
	return reqs
}

// audit reads the audit of product through shop, failing the test on error.
func audit(t *testing.T, shop *order.Service, product string) order.Audit {
	t.Helper()
	a, err := shop.Audit(context.Background(), product)
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	return a
}

// everyNth is an Options.Rand that makes exactly every nth critical section
// stall (given any stall rate between 0 and 0.999), counting the stalls it
// ordered.
type everyNth struct {
	n             int64
	calls, stalls atomic.Int64
}

func (e *everyNth) Rand() float64 {
	if e.calls.Add(1)%e.n == 1 {
		e.stalls.Add(1)
		return 0
	}
	return 0.999
}

// randomID returns a fresh UUID-shaped id for hand-made rows.
func randomID() string { return uuid.NewString() }

// waitFor waits until cond holds, checking every few milliseconds, and
// fails t if it does not within d; what names what is waited for.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
