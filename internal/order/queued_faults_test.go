package order_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// A backlog nobody is writing (its shops died, or were restarted) is
// drained by a shop that audits the product, as the load generator's
// drain wait does: the audit starts a consumer when it sees a backlog.
func TestQueuedAuditDrainsAnUnwatchedBacklog(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		p := queued(t, b, "unwatched", 5)
		c := b.Redis.Clients()[0]
		acceptAll(t, b, p.ID, "a", "b", "c")
		// the shop that accepted them read them and died before its commit
		if _, err := c.XReadGroup(context.Background(), &redis.XReadGroupArgs{Group: redisqueue.Group, Consumer: "dead",
			Streams: []string{redisqueue.StreamKey(p.ID), ">"}, Count: 10, Block: -1}).Result(); err != nil {
			t.Fatal(err)
		}
		acceptAll(t, b, p.ID, "d") // and one more, never read
		shop := newShops(t, b, 1, order.Options{QueueOptions: redisqueue.ConsumerOptions{ClaimIdle: 200 * time.Millisecond}})[0]
		deadline := time.Now().Add(6 * time.Second)
		for time.Now().Before(deadline) {
			a := audit(t, shop, p.ID) // what waitDrain polls
			if a.QueueLength == 0 && a.QueuePending == 0 {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		bl, _ := shop.QueueBacklog(context.Background(), p.ID)
		t.Errorf("after 6s with a live shop polled by the audit: backlog %+v; nobody claims or reads the entries", bl)
	})
}

// GET of a queued order while the shop cannot reach Redis is 503
// unavailable, not 404: Redis is where the orders not yet written are.
func TestQueuedStatusRedisDown(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		p := queued(t, b, "statusdown", 5)
		ids := acceptAll(t, b, p.ID, "a")
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond,
			MaxRetries: -1, ContextTimeoutEnabled: true})
		t.Cleanup(func() { dead.Close() })
		shop := newShops(t, b, 1, order.Options{Queue: redisqueue.New(dead)})[0]
		_, err := shop.OrderStatus(context.Background(), ids[0])
		if !errors.Is(err, order.ErrUnavailable) {
			t.Errorf("GET of a queued (202) order with Redis unreachable: %v; want ErrUnavailable (503), not 404", err)
		}
	})
}

// A batch some of whose orders exist already, with the stock just
// enough for one new order.
func TestQueuedPartialBatch(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "partial", stock.Product{Name: "partial", Stock: 3, Strategy: strategy.SQLAtomic})
		now := time.Now().UTC().Truncate(time.Microsecond)
		x := redisqueue.Order{ID: randomID(), UserID: "x", ProductID: p.ID, Quantity: 2, CreatedAt: now}
		y := redisqueue.Order{ID: randomID(), UserID: "y", ProductID: p.ID, Quantity: 1, CreatedAt: now}
		z := redisqueue.Order{ID: randomID(), UserID: "z", ProductID: p.ID, Quantity: 1, CreatedAt: now}
		if r, left, err := shop.WriteQueued(context.Background(), p.ID, []redisqueue.Order{x}); err != nil || r[0] != nil || left != 1 {
			t.Fatalf("first: %v %d %v", r, left, err)
		}
		r, left, err := shop.WriteQueued(context.Background(), p.ID, []redisqueue.Order{y, x, z})
		if err != nil || r[0] != nil || r[1] != nil || r[2] == nil || r[2].Code != "sold_out" || left != 0 {
			t.Fatalf("second: %+v %d %v; want y written, x skipped, z sold out, 0 left", r, left, err)
		}
		a := audit(t, shop, p.ID)
		if a.Orders != 2 || a.Stock != 0 || !a.Consistent {
			t.Errorf("audit %+v", a)
		}
	})
}

// A consumer that died after its COMMIT, before its XACK: the entries are
// claimed, found written, and only acknowledged.
func TestQueuedDiedAfterCommit(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		p := queued(t, b, "aftercommit", 5)
		c := b.Redis.Clients()[0]
		ids := acceptAll(t, b, p.ID, "a", "b", "c")
		got, err := c.XReadGroup(context.Background(), &redis.XReadGroupArgs{Group: redisqueue.Group, Consumer: "dead",
			Streams: []string{redisqueue.StreamKey(p.ID), ">"}, Count: 10, Block: -1}).Result()
		if err != nil {
			t.Fatal(err)
		}
		var batch []redisqueue.Order
		for i, m := range got[0].Messages {
			qty, _ := strconv.Atoi(m.Values["qty"].(string))
			batch = append(batch, redisqueue.Order{ID: m.Values["id"].(string), UserID: m.Values["user"].(string), ProductID: p.ID,
				Quantity: qty, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)})
			_ = i
		}
		writer := newShops(t, b, 1, order.Options{})[0]
		if _, _, err := writer.WriteQueued(context.Background(), p.ID, batch[:2]); err != nil { // committed, never acked
			t.Fatal(err)
		}
		shop := newShops(t, b, 1, order.Options{QueueOptions: redisqueue.ConsumerOptions{ClaimIdle: 200 * time.Millisecond}})[0]
		status(t, shop, ids[0])
		drained(t, shop, p.ID)
		for _, id := range ids {
			if st := status(t, shop, id); st.Status != order.StatusCreated {
				t.Errorf("%s: %q", id, st.Status)
			}
		}
		a := audit(t, shop, p.ID)
		if a.Orders != 3 || a.Stock != 2 || !a.Consistent || a.RedisStock == nil || *a.RedisStock != 2 {
			t.Errorf("audit %+v", a)
		}
	})
}

// TestQueuedDatabaseDown: a consumer that cannot reach the database keeps
// its entries pending and says why; once the database is back they are
// written.
func TestQueuedDatabaseDown(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shop := newShops(t, b, 1, order.Options{QueueOptions: redisqueue.ConsumerOptions{ClaimIdle: 300 * time.Millisecond}})[0]
		p := queued(t, b, "dbdown", 5)
		if _, err := shop.Place(context.Background(), order.Request{UserID: "warm", ProductID: p.ID, Quantity: 1}); err != nil {
			t.Fatalf("Place: %v", err)
		}
		drained(t, shop, p.ID)
		b.DB.Stop()
		o, err := shop.Place(context.Background(), order.Request{UserID: "u", ProductID: p.ID, Quantity: 1})
		if err != nil || !o.Queued {
			b.DB.Start()
			t.Fatalf("Place with the database down: %+v, %v; want queued (Redis alone answers)", o, err)
		}
		testenv.WaitFor(t, 10*time.Second, "the consumer to report the database", func() bool { return shop.QueueProblem() != "" })
		bl, err := shop.QueueBacklog(context.Background(), p.ID)
		if err != nil || bl.Length != 1 {
			t.Errorf("backlog with the database down: %+v, %v; want the entry still there", bl, err)
		}
		b.DB.Start()
		drained(t, shop, p.ID)
		if st := status(t, shop, o.ID); st.Status != order.StatusCreated {
			t.Errorf("after the database came back: %q, want created", st.Status)
		}
		testenv.WaitFor(t, 10*time.Second, "the problem to clear", func() bool { return shop.QueueProblem() == "" })
	})
}
