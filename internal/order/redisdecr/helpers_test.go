package redisdecr

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The helpers the tests share: a shop's Seller on a test's backends, its
// products and orders, and what the backends say of a sale.

// shop is a Seller as a shop builds it, and what it told the shop:
// reservations given back and reclaimed, and the size of each group
// commit.
type shop struct {
	*Seller
	givenBack, reclaimed atomic.Int64
	mu                   sync.Mutex
	grouped              []int
}

// newShop returns a shop that sells on db and, unless opts names another
// Stock, b's first Redis node, closed when t ends. opts' hooks are the
// shop's own; its Logger, unless opts has one, discards.
func newShop(t *testing.T, b *testenv.Env, db *gorm.DB, opts Options) *shop {
	t.Helper()
	s := &shop{}
	if opts.Stock == nil {
		opts.Stock = redisstock.New(b.Redis.Clients()[0])
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Writer = orderdb.NewWriter(db, nil)
	opts.GivenBack = func(string) { s.givenBack.Add(1) }
	opts.Reclaimed = func(string) { s.reclaimed.Add(1) }
	opts.Grouped = func(n int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.grouped = append(s.grouped, n)
	}
	s.Seller = New(opts)
	t.Cleanup(s.Close)
	return s
}

// addProduct creates p as a redis-decr product whose id is b's key for
// name, in db, and loads its stock into Redis, as a shop's AddProduct
// does; it returns p as stored.
func addProduct(ctx context.Context, t *testing.T, b *testenv.Env, db *gorm.DB, name string, p stock.Product) stock.Product {
	t.Helper()
	p.ID, p.Strategy = b.Redis.Key(name), strategy.RedisDecr
	created, err := stock.NewStore(db).Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := redisstock.New(b.Redis.Clients()[0]).Load(ctx, created.ID, created.Stock); err != nil {
		t.Fatal(err)
	}
	return created
}

// newOrder is a new order of one unit of p for user.
func newOrder(p stock.Product, user string) orderdb.Order {
	return orderdb.Order{ID: uuid.NewString(), UserID: user, ProductID: p.ID, Quantity: 1, Strategy: p.Strategy,
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
}

// place sells one unit of p to user, as a shop's Place does: it touches p
// (its sweep starts), then places.
func (s *shop) place(ctx context.Context, p stock.Product, user string) error {
	s.KeepSweeping(p)
	return s.Place(ctx, p, newOrder(p, user))
}

// mustPlace places one unit of p for user and fails the test if it does
// not work.
func (s *shop) mustPlace(ctx context.Context, t *testing.T, p stock.Product, user string) {
	t.Helper()
	if err := s.place(ctx, p, user); err != nil {
		t.Fatalf("%s buys %s: %v", user, p.ID, err)
	}
}

// figures is what the backends say of one product's sale, as a shop's
// audit says it.
type figures struct {
	Stock, Orders, Sold int
	Redis               *int // nil: Redis has no stock
}

// audit reads p's figures from db and b's first Redis node.
func audit(ctx context.Context, t *testing.T, b *testenv.Env, db *gorm.DB, p stock.Product) figures {
	t.Helper()
	var f figures
	err := db.WithContext(ctx).Raw(`SELECT stock, (SELECT COUNT(*) FROM orders WHERE product_id = ?),
		(SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE product_id = ?) FROM products WHERE id = ?`, p.ID, p.ID, p.ID).
		Row().Scan(&f.Stock, &f.Orders, &f.Sold)
	if err != nil {
		t.Fatal(err)
	}
	if left, err := redisstock.New(b.Redis.Clients()[0]).Left(ctx, p.ID); err == nil {
		f.Redis = &left
	}
	return f
}

// drifted reports whether Redis's stock is not the database's.
func (f figures) drifted() bool { return f.Redis == nil || *f.Redis != f.Stock }

// checkExact checks that p sold sold units, one per order, that the
// database's stock is what is left of them, and that Redis agrees.
func checkExact(ctx context.Context, t *testing.T, b *testenv.Env, db *gorm.DB, p stock.Product, sold int) {
	t.Helper()
	f := audit(ctx, t, b, db, p)
	if f.Orders != sold || f.Sold != sold || f.Stock != p.InitialStock-sold || f.drifted() {
		t.Errorf("%s: %d orders, %d sold, stock %d, Redis %v; want %d, %d, %d, the database's",
			p.ID, f.Orders, f.Sold, f.Stock, deref(f.Redis), sold, sold, p.InitialStock-sold)
	}
}

// deref shows a *int in a message.
func deref(p *int) any {
	if p == nil {
		return "none"
	}
	return *p
}

// ordersOf counts user's orders of product.
func ordersOf(ctx context.Context, t *testing.T, db *gorm.DB, product, user string) int64 {
	t.Helper()
	var n int64
	err := db.WithContext(ctx).Raw("SELECT COUNT(*) FROM orders WHERE product_id = ? AND user_id = ?", product, user).
		Row().Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// stockOf reads product's stock in the database.
func stockOf(ctx context.Context, t *testing.T, db *gorm.DB, product string) int {
	t.Helper()
	n, err := orderdb.ReadStock(ctx, db, product)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// hookWork is an Options.Work that runs hook (once, if armed): a test's
// way into the middle of Place, between the take and the write.
type hookWork struct {
	armed atomic.Bool
	hook  func(ctx context.Context)
}

func (h *hookWork) Work(ctx context.Context, _ stock.Product) error {
	if h.armed.CompareAndSwap(true, false) && h.hook != nil {
		h.hook(ctx)
	}
	return ctx.Err()
}
