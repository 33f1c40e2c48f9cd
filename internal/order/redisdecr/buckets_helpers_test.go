package redisdecr

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The helpers of the bucket tests: each test runs on the embedded and
// real backends, its buckets on one Redis, and on the real Redis Cluster,
// its buckets on different masters.

// bucketEnv is where a bucket test sells: the database, and the Redis
// (a node, or the cluster) that keeps the stock, with its test's keys.
type bucketEnv struct {
	b     *testenv.Env
	db    *gorm.DB
	redis redis.UniversalClient
	key   func(name string) string
}

// eachRedis runs fn on the backends (testenv.Backends, the stock on the
// first Redis node), then on the Redis Cluster (testenv.Cluster).
func eachRedis(t *testing.T, fn func(t *testing.T, e bucketEnv)) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		fn(t, bucketEnv{b: b, db: b.DB.DB(), redis: b.Redis.Clients()[0], key: b.Redis.Key})
	})
	testenv.Cluster(t, func(t *testing.T, b *testenv.Env) {
		fn(t, bucketEnv{b: b, db: b.DB.DB(), redis: b.Cluster.Client(), key: b.Cluster.Key})
	})
}

// shop is a Seller on e's database and Redis (newShop's, with opts).
func (e bucketEnv) shop(t *testing.T, opts Options) *shop {
	opts.Stock = redisstock.New(e.redis)
	return newShop(t, e.b, e.db, opts)
}

// addBucketed creates a redis-decr product of units over k buckets, its
// id e's key for name, and loads each bucket's share into Redis, as a
// shop's AddProduct does.
func (e bucketEnv) addBucketed(ctx context.Context, t *testing.T, name string, units, k int) stock.Product {
	t.Helper()
	p := stock.Product{ID: e.key(name), Strategy: strategy.RedisDecr, Stock: units, Buckets: k}
	created, err := stock.NewStore(e.db).Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.shop(t, Options{}).Load(ctx, created); err != nil {
		t.Fatal(err)
	}
	return created
}

// buckets reads each of p's buckets, in the database (its share of the
// initial stock less its orders' units) and in Redis (-1: Redis has none).
func (e bucketEnv) buckets(ctx context.Context, t *testing.T, p stock.Product) (db, rs []int) {
	t.Helper()
	var rows []struct{ Bucket, Sold int }
	err := e.db.WithContext(ctx).Raw("SELECT bucket, SUM(quantity) AS sold FROM orders WHERE product_id = ? GROUP BY bucket", p.ID).
		Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	db = stock.Split(p.InitialStock, p.Buckets)
	for _, r := range rows {
		db[r.Bucket] -= r.Sold
	}
	st := redisstock.New(e.redis)
	for _, name := range redisstock.Buckets(p.ID, p.Buckets) {
		n, err := st.Left(ctx, name)
		if err != nil {
			n = -1
		}
		rs = append(rs, n)
	}
	return db, rs
}

// checkBuckets checks that p's buckets hold want, in the database and in
// Redis, and that the product's stock in the database is their sum.
func (e bucketEnv) checkBuckets(ctx context.Context, t *testing.T, p stock.Product, want []int) {
	t.Helper()
	db, rs := e.buckets(ctx, t, p)
	if !slices.Equal(db, want) || !slices.Equal(rs, want) {
		t.Errorf("buckets: database %v, Redis %v; want %v in both", db, rs, want)
	}
	total := 0
	for _, n := range want {
		total += n
	}
	if got := stockOf(ctx, t, e.db, p.ID); got != total {
		t.Errorf("the product's stock: %d, want %d", got, total)
	}
}

// homed returns n buyers whose home bucket of k is home.
func homed(prefix string, k, home, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		if u := prefix + strconv.Itoa(i); orderdb.HomeBucket(u, k) == home {
			out = append(out, u)
		}
	}
	return out
}

// dieAfterTakeIn is dieAfterTake on e: a shop reserves p for user and
// dies before its write, its reservation due after grace.
func (e bucketEnv) dieAfterTakeIn(ctx context.Context, t *testing.T, grace time.Duration, p stock.Product, user string) {
	t.Helper()
	h := &hookWork{hook: func(context.Context) { runtime.Goexit() }}
	shop := e.shop(t, Options{Work: h.Work})
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
