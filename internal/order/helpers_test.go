package order_test

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The helpers the order tests share: shops and products on a test's
// backends, requests, hooks into a shop's options, waiting, and checks of
// the audit. The crowd of buyers (rush) is in helpers_rush_test.go.

// newShops builds n simulated shop processes on b (shopOn), all sharing
// b's database.
func newShops(t *testing.T, b *testenv.Env, n int, opts order.Options) []*order.Service {
	t.Helper()
	shops := make([]*order.Service, n)
	for i := range shops {
		shops[i] = shopOn(t, b, b.DB.DB(), opts)
	}
	return shops
}

// shopOn builds one simulated shop process on db and b's Redis nodes: its
// own Redis clients and its own lockers (one per mode, and an etcd one on
// its own client when b has a cluster), all closed when t ends. When b has
// a Redis Cluster the single-node roles go to it (Env.Single).
func shopOn(t *testing.T, b *testenv.Env, db *gorm.DB, opts order.Options) *order.Service {
	t.Helper()
	return shopWith(t, b, db, opts, nil)
}

// shopWith is shopOn with extra lockers beside b's (a zookeeper one).
func shopWith(t *testing.T, b *testenv.Env, db *gorm.DB, opts order.Options, extra map[dlock.Mode]dlock.Locker) *order.Service {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	clients := b.Redis.Clients()
	single := b.Single(clients)
	lockers := make(map[dlock.Mode]dlock.Locker)
	for _, m := range dlock.Modes() {
		l, err := dlock.NewSingle(m, single)
		if m == dlock.ModeRedlock {
			l, err = dlock.New(m, clients)
		}
		if err != nil {
			t.Fatalf("dlock.New(%s): %v", m, err)
		}
		t.Cleanup(func() { l.Close() })
		lockers[m] = l
	}
	if b.Etcd != nil {
		lockers[etcdlock.Mode] = etcdlock.New(b.Etcd.Client())
	}
	maps.Copy(lockers, extra)
	opts.RedisDecr = redisstock.New(single)
	if opts.Queue == nil {
		opts.Queue = redisqueue.New(single)
	}
	shop := order.NewService(db, stock.NewStore(db), lockers, opts)
	t.Cleanup(func() { shop.Close() })
	return shop
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
	single := b.Single(b.Redis.Clients())
	opts := order.Options{RedisDecr: redisstock.New(single), Queue: redisqueue.New(single),
		Logger: slog.New(slog.DiscardHandler)}
	svc := order.NewService(b.DB.DB(), stock.NewStore(b.DB.DB()), nil, opts)
	got, err := svc.AddProduct(context.Background(), p)
	svc.Close() // and its consumer of a redis-queue product: the shops run theirs
	if err != nil {
		t.Fatalf("create product %s: %v", p.ID, err)
	}
	return got
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

// randomID returns a fresh UUID-shaped id for hand-made rows.
func randomID() string { return uuid.NewString() }

// mustPlace places one unit of product for user and fails the test if it
// does not work.
func mustPlace(ctx context.Context, t *testing.T, shop *order.Service, product, user string) {
	t.Helper()
	if _, err := shop.Place(ctx, order.Request{UserID: user, ProductID: product, Quantity: 1}); err != nil {
		t.Fatalf("Place for %s: %v", user, err)
	}
}

// eventuallyPlace is placeAfterRecovery for a buyer who must get an order:
// any other answer fails the test.
func eventuallyPlace(ctx context.Context, t *testing.T, shop *order.Service, product, user string) {
	t.Helper()
	if err := placeAfterRecovery(ctx, shop, product, user); err != nil {
		t.Fatalf("Place for %s after recovery: %v", user, err)
	}
}

// placeAfterRecovery places one unit of product for user, trying again
// while Place says ErrUnavailable (pooled connections cut by a fault are
// found broken one by one), ErrDuplicateRequest or ErrLockTimeout (locks
// a shop abandoned after an order in doubt, until their TTL), for at most
// ten seconds; it returns Place's last error.
func placeAfterRecovery(ctx context.Context, shop *order.Service, product, user string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := shop.Place(ctx, order.Request{UserID: user, ProductID: product, Quantity: 1})
		retry := errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrDuplicateRequest) ||
			errors.Is(err, order.ErrLockTimeout)
		if !retry || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hookSleep is an Options.Sleep that runs hook (once, if armed) before
// sleeping as the default does: a test's way into the business work, in
// the middle of the order flow.
type hookSleep struct {
	armed atomic.Bool
	hook  func(ctx context.Context)
}

func (h *hookSleep) Sleep(ctx context.Context, d time.Duration) error {
	if h.armed.CompareAndSwap(true, false) && h.hook != nil {
		h.hook(ctx)
	}
	return orderdb.Sleep(ctx, d)
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

// audit reads product's audit, asking again while the database is
// unavailable (pooled connections a fault cut are found broken one by one,
// as placeAfterRecovery says), for at most ten seconds.
func audit(t *testing.T, shop *order.Service, product string) order.Audit {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, err := shop.Audit(context.Background(), product)
		switch {
		case err == nil:
			return a
		case !errors.Is(err, order.ErrUnavailable) || time.Now().After(deadline):
			t.Fatalf("Audit: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkExact compares an audit with want, which has no Redis figures: for
// a redis-decr or redis-queue product Redis must agree with the database
// (drift 0).
func checkExact(t *testing.T, got, want order.Audit) {
	t.Helper()
	if got.Strategy == strategy.RedisDecr || got.Strategy == strategy.RedisQueue {
		if got.RedisStock == nil || got.Drift != 0 {
			t.Errorf("%s: Redis stock %v, drift %d (%s); want the database's, drift 0",
				got.Strategy, deref(got.RedisStock), got.Drift, got.RedisErr)
		}
		got.RedisStock = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("audit\n got %+v\nwant %+v", got, want)
	}
}

// deref shows a *int in a message.
func deref(p *int) any {
	if p == nil {
		return "none"
	}
	return *p
}

// checkAudit checks that product has sold exactly orders units, one per
// order, out of 10, and is consistent.
func checkAudit(t *testing.T, shop *order.Service, product string, orders int) {
	t.Helper()
	a := audit(t, shop, product)
	if a.Orders != orders || a.Sold != orders || a.Stock != 10-orders || !a.Consistent {
		t.Errorf("audit: got %d orders, %d sold, stock %d, consistent %v; want %d, %d, %d, true",
			a.Orders, a.Sold, a.Stock, a.Consistent, orders, orders, 10-orders)
	}
}

// checkNoKeys checks that no lock of product outlives its TTL on any node.
// Usually none is left at all; but a release that met a connection the
// fault had cut is not retried, and that node's key then expires by its TTL
// (a second here), which is what the TTL is for.
func checkNoKeys(t *testing.T, b *testenv.Env, product string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for i := range b.Redis.Len() {
		for {
			keys := b.Redis.Keys(i, "flashsale:*"+product+"*")
			if len(keys) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("node %d: keys left behind: %v", i, keys)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// noConnectionInUse fails t if a connection of db's pool is still checked
// out two seconds after the last call returned. A query cancelled
// mid-flight gives its connection back from the driver's own goroutine, a
// little later.
func noConnectionInUse(t *testing.T, db *gorm.DB) {
	t.Helper()
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	n := sqlDB.Stats().InUse
	for end := time.Now().Add(2 * time.Second); n != 0 && time.Now().Before(end); n = sqlDB.Stats().InUse {
		time.Sleep(10 * time.Millisecond)
	}
	if n != 0 {
		t.Errorf("%d connections still in use 2s after the last call returned", n)
	}
}
