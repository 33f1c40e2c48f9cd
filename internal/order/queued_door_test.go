package order_test

// redis-queue's orders go past the shop's door (HasOwnQueue): what bounds
// them there instead.

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestQueuedNotLoadedLoadsOnce: Redis lost a redis-queue product's stock
// (a restart without persistence, a failover to a replica that had not
// got the key). A buyer whose accept meets "not loaded" has the stock
// read from the database and loaded (redisqueue.Seller.Place, step 1b). These buyers
// are past the door, so one of them at a time per shop does it and the
// others wait for it (redisqueue.Seller.load): without that, the whole crowd that met
// "not loaded" before the first load landed read the database at once
// (up to 298 of 300 on the real servers). The orders go through a shop's
// router, with the default door, and all are accepted.
func TestQueuedNotLoadedLoadsOnce(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		// The database's reads are counted by callbacks, which GORM lets
		// nobody change while a query runs: registered before the shop
		// starts, removed after it stops (cleanups run last first).
		var in, peak, reads atomic.Int64
		db := b.DB.DB()
		t.Cleanup(func() {
			db.Callback().Query().Remove("test:enter")
			db.Callback().Query().Remove("test:leave")
		})
		// The load's read of the returns owed to the product's stock
		// (orderdb.OwedIDs), in the snapshot it reads the stock in: only a
		// load plucks their ids (the consumers read the stock too, in the
		// transaction that writes a batch; the sweep reads whole rows).
		// The SQL is not built yet when the query's callbacks start.
		loadRead := func(tx *gorm.DB) bool {
			_, ids := tx.Statement.Dest.(*[]string)
			return ids && tx.Statement.Table == "redis_owed"
		}
		enter := func(tx *gorm.DB) {
			if loadRead(tx) {
				reads.Add(1)
				n := in.Add(1)
				for {
					m := peak.Load()
					if n <= m || peak.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(2 * time.Millisecond) // a database a little busy
			}
		}
		leave := func(tx *gorm.DB) {
			if loadRead(tx) {
				in.Add(-1)
			}
		}
		if err := db.Callback().Query().Before("gorm:query").Register("test:enter", enter); err != nil {
			t.Fatal(err)
		}
		if err := db.Callback().Query().After("gorm:query").Register("test:leave", leave); err != nil {
			t.Fatal(err)
		}
		shop := newShops(t, b, 1, order.Options{LockWait: 5 * time.Second})[0]
		p := queued(t, b, "herd", 1000)
		ctx := context.Background()
		if _, err := shop.Place(ctx, order.Request{UserID: "first", ProductID: p.ID, Quantity: 1}); err != nil {
			t.Fatal(err)
		}
		if !shop.HasOwnQueue(ctx, p.ID) {
			t.Fatal("a redis-queue product sold here: HasOwnQueue = false")
		}
		// Redis loses the stock (only this product's key: no FLUSHALL).
		if err := b.Redis.Clients()[0].Del(ctx, "flashsale:stock:{"+p.ID+"}").Err(); err != nil {
			t.Fatal(err)
		}
		h := httpapi.NewRouter(httpapi.Deps{Products: stock.NewStore(db), Orders: shop,
			MaxInFlightOrders: app.DefaultMaxInFlightOrders, OrderQueueWait: 5 * time.Second,
			Logger: slog.New(slog.DiscardHandler)})
		const n = 300
		var wg sync.WaitGroup
		var ok, failed atomic.Int64
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				rec := postOrder(h, p.ID, "u"+strconv.Itoa(i))
				if rec.Code != http.StatusAccepted {
					failed.Add(1)
					return
				}
				ok.Add(1)
			})
		}
		close(start)
		wg.Wait()
		t.Logf("%d accepted, %d failed; %d reads of the database's stock, at most %d at once", ok.Load(), failed.Load(), reads.Load(), peak.Load())
		if peak.Load() != 1 {
			t.Errorf("after Redis lost the stock, %d buyers read it from the database at once (%d in all); want 1 at a time",
				peak.Load(), reads.Load())
		}
		if failed.Load() > 0 {
			t.Errorf("%d of %d buyers were not accepted", failed.Load(), n)
		}
	})
}

// TestQueuedBusyOverHTTP: a redis-queue shop whose Redis holds its
// replies. The buyers queued behind the held trip skip the door, wait the
// lock wait and get 503 busy (with Retry-After and the table's message);
// the held one is answered 202 once Redis answers; nothing answered busy
// is queued.
func TestQueuedBusyOverHTTP(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		px, c := proxiedRedis(t, b, &redis.Options{ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
		const wait = 500 * time.Millisecond // what the first order may take to be sent, on a busy machine
		shop := newShops(t, b, 1, order.Options{LockWait: wait, Queue: redisqueue.New(c)})[0]
		p := queued(t, b, "busyhttp", 100)
		db := b.DB.DB()
		h := httpapi.NewRouter(httpapi.Deps{Products: stock.NewStore(db), Orders: shop,
			MaxInFlightOrders: 1, OrderQueueWait: wait, Logger: slog.New(slog.DiscardHandler)})
		post := func(user string) *httptest.ResponseRecorder { return postOrder(h, p.ID, user) }
		if rec := post("first"); rec.Code != http.StatusAccepted {
			t.Fatalf("first: %d %s", rec.Code, rec.Body)
		}
		// Hold at the accept trip's reply (its SET NX's +OK), not at a
		// consumer's: the whole proxy stops there.
		px.HoldAt(func(b []byte) int {
			if bytes.HasPrefix(b, []byte("+OK\r\n")) {
				return 0
			}
			return -1
		})
		held := make(chan *httptest.ResponseRecorder, 1)
		go func() { held <- post("held") }()
		testenv.WaitFor(t, 5*time.Second, "the held trip's script to run", func() bool { return redisStock(t, b, p.ID) == 98 })
		var wg sync.WaitGroup
		recs := make([]*httptest.ResponseRecorder, 5)
		for i := range recs {
			wg.Go(func() { recs[i] = post("late" + strconv.Itoa(i)) })
		}
		wg.Wait()
		for i, rec := range recs {
			if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"busy"`) || rec.Header().Get("Retry-After") == "" {
				t.Errorf("late%d: %d %s (Retry-After %q); want 503 busy", i, rec.Code, rec.Body, rec.Header().Get("Retry-After"))
			}
			t.Logf("late%d: %d %s", i, rec.Code, rec.Body)
		}
		px.Release()
		if rec := <-held; rec.Code != http.StatusAccepted {
			t.Errorf("held: %d %s, want 202", rec.Code, rec.Body)
		}
		if n := redisStock(t, b, p.ID); n != 98 {
			t.Errorf("Redis stock %d, want 98 (first, held): a busy order took units", n)
		}
	})
}

// TestQueuedRedisDownOverHTTP: a redis-queue product whose Redis refuses
// connections: every buyer past the door is answered a 503. (Which one:
// in_doubt, as at the door: a failed trip may have reached Redis, and
// placeQueued cannot tell.)
func TestQueuedRedisDownOverHTTP(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		px, c := proxiedRedis(t, b, &redis.Options{DialTimeout: 500 * time.Millisecond,
			ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
		shop := newShops(t, b, 1, order.Options{LockWait: time.Second, Queue: redisqueue.New(c)})[0]
		p := queued(t, b, "downhttp", 100)
		db := b.DB.DB()
		h := httpapi.NewRouter(httpapi.Deps{Products: stock.NewStore(db), Orders: shop,
			MaxInFlightOrders: 1, OrderQueueWait: time.Second, Logger: slog.New(slog.DiscardHandler)})
		post := func(user string) *httptest.ResponseRecorder { return postOrder(h, p.ID, user) }
		if rec := post("first"); rec.Code != http.StatusAccepted {
			t.Fatalf("first: %d %s", rec.Code, rec.Body)
		}
		px.Stop()
		var wg sync.WaitGroup
		recs := make([]*httptest.ResponseRecorder, 50)
		start := time.Now()
		for i := range recs {
			wg.Go(func() { recs[i] = post("down" + strconv.Itoa(i)) })
		}
		wg.Wait()
		el := time.Since(start)
		codes := map[string]int{}
		for _, rec := range recs {
			codes[strconv.Itoa(rec.Code)+" "+rec.Body.String()]++
			if rec.Code != http.StatusServiceUnavailable {
				t.Errorf("with Redis down: %d %s, want 503", rec.Code, rec.Body)
			}
		}
		t.Logf("after %v: %v", el, codes)
	})
}

// postOrder has h place user's order of one unit of product.
func postOrder(h http.Handler, product, user string) *httptest.ResponseRecorder {
	body := `{"user_id":"` + user + `","product_id":"` + product + `","quantity":1}`
	req := httptest.NewRequest(http.MethodPost, "/api/v1/orders", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// proxiedRedis returns a proxy in front of b's first Redis node and a
// client through it with opts (its address, no retries, the context's
// deadlines), both closed when t ends.
func proxiedRedis(t *testing.T, b *testenv.Env, opts *redis.Options) (*testenv.Proxy, *redis.Client) {
	t.Helper()
	px, err := testenv.NewProxy(b.Redis.DirectAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	opts.Addr, opts.MaxRetries, opts.ContextTimeoutEnabled, opts.DisableIdentity = px.Addr(), -1, true, true
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return px, c
}
