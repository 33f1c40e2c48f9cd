package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The helpers of the tests of an order's life after it is written (pay,
// cancel, the sweep, buying again).

// lifeBackends runs fn once per database the tests have: SQLite, and
// MariaDB or MySQL when FLASHSALE_TEST_MYSQL_DSN is set. An order's life
// is the database's business (its clock, its compare-and-set, the stock's
// return), so the locks run on embedded Redis nodes beside either.
func lifeBackends(t *testing.T, fn func(t *testing.T, b *testenv.Env)) {
	t.Helper()
	for _, m := range testenv.DBModes(t) {
		t.Run(string(m), func(t *testing.T) {
			fn(t, &testenv.Env{Mode: m, Redis: testenv.NewRedis(t, testenv.Embedded), DB: testenv.NewDB(t, m)})
		})
	}
}

// lifeStrategies are the rows whose stock lives in the database, each a
// product template (a name for the subtest, and the product's settings);
// withEtcd adds etcd's, which needs b's cluster.
func lifeStrategies(withEtcd bool) []struct {
	name string
	p    stock.Product
} {
	rows := []struct {
		name string
		p    stock.Product
	}{
		{"sql-atomic", stock.Product{Strategy: strategy.SQLAtomic}},
		{"sql-atomic+k4", stock.Product{Strategy: strategy.SQLAtomic, Buckets: 4}},
		{"sql-for-update", stock.Product{Strategy: strategy.SQLForUpdate}},
		{"sql-version", stock.Product{Strategy: strategy.SQLVersion}},
		{"sql-one-trip", stock.Product{Strategy: strategy.SQLOneTrip}},
		{"lua", stock.Product{Strategy: strategy.Lua}},
		{"lua+batch", stock.Product{Strategy: strategy.Lua, BatchMax: 8}},
		{"redlock", stock.Product{Strategy: strategy.Redlock}},
		{"fenced", stock.Product{Strategy: strategy.Fenced}},
		{"fenced+batch", stock.Product{Strategy: strategy.Fenced, BatchMax: 8}},
	}
	if withEtcd {
		rows = append(rows, struct {
			name string
			p    stock.Product
		}{"etcd", stock.Product{Strategy: strategy.Etcd}})
	}
	return rows
}

// payable creates a product from template p with stock units and a pay
// window of within.
func payable(t *testing.T, b *testenv.Env, p stock.Product, units int, within time.Duration) stock.Product {
	t.Helper()
	p.Stock, p.PayWithin = units, within
	return newProduct(t, b, "life", p)
}

// place places one unit of p for user and returns the order, failing the
// test if it cannot.
func place(ctx context.Context, t *testing.T, shop *order.Service, p stock.Product, user string) order.Order {
	t.Helper()
	o, err := shop.Place(ctx, order.Request{UserID: user, ProductID: p.ID, Quantity: 1})
	if err != nil {
		t.Fatalf("Place for %s: %v", user, err)
	}
	return o
}

// auditOf audits p and fails the test if it cannot, or if the audit is not
// consistent (stock + live units sold = initial, each bucket too).
func auditOf(ctx context.Context, t *testing.T, shop *order.Service, p stock.Product) order.Audit {
	t.Helper()
	a, err := shop.Audit(ctx, p.ID)
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	if !a.Consistent {
		t.Errorf("audit not consistent: stock %d + sold %d != initial %d (buckets %+v)", a.Stock, a.Sold, a.InitialStock, a.Buckets)
	}
	return a
}

// stockOf is p's stock left now, as the audit reads it.
func stockOf(ctx context.Context, t *testing.T, shop *order.Service, p stock.Product) int {
	t.Helper()
	a, err := shop.Audit(ctx, p.ID)
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	return a.Stock
}

// waitDue waits until the database's clock is past the deadlines of
// orders, which must be pending now.
func waitDue(ctx context.Context, t *testing.T, b *testenv.Env, shop *order.Service, orders ...order.Order) {
	t.Helper()
	var last time.Time
	for _, o := range orders {
		st := stateOf(ctx, t, shop, o.ID)
		if st.State != life.Pending {
			t.Fatalf("order %s is %q, want pending", o.ID, st.State)
		}
		if st.Deadline.After(last) {
			last = st.Deadline
		}
	}
	db := b.DB.DB()
	testenv.WaitFor(t, 10*time.Second, "the database's clock to pass the deadlines", func() bool {
		var now int64
		if err := db.Raw("SELECT " + life.NowMs(db)).Row().Scan(&now); err != nil {
			t.Fatalf("the database's now: %v", err)
		}
		return now > last.UnixMilli()
	})
}

// stateOf is where order id stands in its life.
func stateOf(ctx context.Context, t *testing.T, shop *order.Service, id string) order.OrderStatus {
	t.Helper()
	st, err := shop.OrderStatus(ctx, id)
	if err != nil {
		t.Fatalf("OrderStatus(%s): %v", id, err)
	}
	return st
}
