package order_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// queued creates a redis-queue product of units on b.
func queued(t *testing.T, b *testenv.Env, name string, units int) stock.Product {
	t.Helper()
	return newProduct(t, b, name, stock.Product{Name: name, Stock: units, Strategy: strategy.RedisQueue})
}

// drained waits until product's queue has nothing left to write.
func drained(t *testing.T, shop *order.Service, product string) {
	t.Helper()
	testenv.WaitFor(t, 20*time.Second, "the queue to drain", func() bool {
		bl, err := shop.QueueBacklog(context.Background(), product)
		return err == nil && bl.Drained()
	})
}

// status reads where order id stands, failing t on error.
func status(t *testing.T, shop *order.Service, id string) order.OrderStatus {
	t.Helper()
	st, err := shop.OrderStatus(context.Background(), id)
	if err != nil {
		t.Fatalf("OrderStatus(%s): %v", id, err)
	}
	return st
}

// TestQueuedRush: a crowd of buyers, each clicking twice, across three
// shops: exactly the stock is accepted (202), every other click is told
// sold out or duplicate at once, and after the drain every accepted order
// is written, once, and Redis agrees with the database.
func TestQueuedRush(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shops := newShops(t, b, 3, order.Options{})
		p := queued(t, b, "rush", 10)
		var accepted, soldOut, dup, other atomic.Int64
		ids := make(chan string, 100)
		var wg sync.WaitGroup
		for i, r := range buyers(p.ID, 40) {
			for click := range 2 {
				wg.Go(func() {
					o, err := shops[(i+click)%3].Place(context.Background(), r)
					switch {
					case err == nil && o.Queued:
						accepted.Add(1)
						ids <- o.ID
					case errors.Is(err, order.ErrSoldOut):
						soldOut.Add(1)
					case errors.Is(err, order.ErrDuplicateOrder):
						dup.Add(1)
					default:
						other.Add(1)
						t.Errorf("Place: got %+v, %v; want queued, sold out or duplicate", o, err)
					}
				})
			}
		}
		wg.Wait()
		close(ids)
		if got := accepted.Load(); got != 10 {
			t.Errorf("accepted %d, want 10 (sold out %d, duplicate %d)", got, soldOut.Load(), dup.Load())
		}
		drained(t, shops[0], p.ID)
		for id := range ids {
			if st := status(t, shops[2], id); st.Status != order.StatusCreated {
				t.Errorf("order %s: status %q, want created", id, st.Status)
			}
		}
		checkExact(t, audit(t, shops[1], p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisQueue,
			InitialStock: 10, Stock: 0, Orders: 10, Sold: 10, Consistent: true})
	})
}

// TestQueuedStatus: an accepted order is queued, then created; an unknown
// id is not found; a malformed one is refused before anything is asked.
func TestQueuedStatus(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shop := newShops(t, b, 1, order.Options{})[0]
		p := queued(t, b, "status", 3)
		o, err := shop.Place(context.Background(), order.Request{UserID: "u1", ProductID: p.ID, Quantity: 2})
		if err != nil || !o.Queued {
			t.Fatalf("Place: got %+v, %v; want a queued order", o, err)
		}
		if st := status(t, shop, o.ID); st.Status != order.StatusQueued && st.Status != order.StatusCreated {
			t.Errorf("right after Place: status %q, want queued or created", st.Status)
		}
		drained(t, shop, p.ID)
		st := status(t, shop, o.ID)
		if st.Status != order.StatusCreated || st.Order.UserID != "u1" || st.Order.Quantity != 2 {
			t.Errorf("after the drain: got %+v, want created for u1, quantity 2", st)
		}
		if _, err := shop.OrderStatus(context.Background(), randomID()); !errors.Is(err, stock.ErrNotFound) {
			t.Errorf("unknown id: got %v, want not found", err)
		}
		if _, err := shop.OrderStatus(context.Background(), "bad id!"); !errors.Is(err, order.ErrInvalid) {
			t.Errorf("malformed id: got %v, want invalid", err)
		}
	})
}

// TestQueuedWriteIdempotent: a batch delivered twice, even to two writers
// at once, is written once and takes its units once.
func TestQueuedWriteIdempotent(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		shops := newShops(t, b, 2, order.Options{})
		p := newProduct(t, b, "idem", stock.Product{Name: "idem", Stock: 10, Strategy: strategy.SQLAtomic})
		now := time.Now().UTC().Truncate(time.Microsecond)
		batch := []redisqueue.Order{
			{ID: randomID(), UserID: "a", ProductID: p.ID, Quantity: 2, CreatedAt: now},
			{ID: randomID(), UserID: "b", ProductID: p.ID, Quantity: 1, CreatedAt: now},
		}
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				refusals, _, err := shops[i%2].WriteQueued(context.Background(), p.ID, batch)
				if err != nil {
					t.Errorf("WriteQueued: %v", err)
					return
				}
				for j, r := range refusals {
					if r != nil {
						t.Errorf("WriteQueued: order %d refused: %+v", j, *r)
					}
				}
			})
		}
		wg.Wait()
		a := audit(t, shops[0], p.ID)
		if a.Orders != 2 || a.Sold != 3 || a.Stock != 7 || !a.Consistent {
			t.Errorf("audit: got %d orders, %d sold, stock %d, consistent %v; want 2, 3, 7, true",
				a.Orders, a.Sold, a.Stock, a.Consistent)
		}
	})
}

// TestQueuedClaim: entries read by a consumer that died before it
// acknowledged them are claimed by a live shop's consumer and written.
func TestQueuedClaim(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		p := queued(t, b, "claim", 5)
		c := b.Redis.Clients()[0]
		want := acceptAll(t, b, p.ID, "a", "b", "c")
		// A consumer reads them, and dies without acknowledging.
		got, err := c.XReadGroup(context.Background(), &redis.XReadGroupArgs{Group: redisqueue.Group, Consumer: "dead",
			Streams: []string{redisqueue.StreamKey(p.ID), ">"}, Count: 10, Block: -1}).Result()
		if err != nil || len(got) != 1 || len(got[0].Messages) != 3 {
			t.Fatalf("XREADGROUP as the dead consumer: %v, %v", got, err)
		}
		shop := newShops(t, b, 1, order.Options{QueueOptions: redisqueue.ConsumerOptions{ClaimIdle: 300 * time.Millisecond}})[0]
		if st := status(t, shop, want[0]); st.Status != order.StatusQueued { // and starts the consumer
			t.Errorf("status: %q, want queued", st.Status)
		}
		drained(t, shop, p.ID)
		for _, id := range want {
			if st := status(t, shop, id); st.Status != order.StatusCreated {
				t.Errorf("order %s: %q, want created", id, st.Status)
			}
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.RedisQueue,
			InitialStock: 5, Stock: 2, Orders: 3, Sold: 3, Consistent: true})
	})
}

// TestQueuedDeadLetter: an order the database refuses for good is
// dead-lettered: refused with the reason, its units given back.
func TestQueuedDeadLetter(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		t.Run("product deleted", func(t *testing.T) {
			shop := newShops(t, b, 1, order.Options{})[0]
			p := queued(t, b, "deleted", 5)
			if _, err := shop.Place(context.Background(), order.Request{UserID: "first", ProductID: p.ID, Quantity: 1}); err != nil {
				t.Fatalf("Place: %v", err) // the shop knows the product now
			}
			drained(t, shop, p.ID)
			db := b.DB.DB()
			if err := db.Exec("DELETE FROM orders WHERE product_id = ?", p.ID).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Exec("DELETE FROM products WHERE id = ?", p.ID).Error; err != nil {
				t.Fatal(err)
			}
			o, err := shop.Place(context.Background(), order.Request{UserID: "late", ProductID: p.ID, Quantity: 2})
			if err != nil || !o.Queued {
				t.Fatalf("Place after the delete: %+v, %v; want queued (the shop has the product cached)", o, err)
			}
			testenv.WaitFor(t, 10*time.Second, "the order to be refused", func() bool {
				st, err := shop.OrderStatus(context.Background(), o.ID)
				return err == nil && st.Status == order.StatusRefused
			})
			if st := status(t, shop, o.ID); st.Code != "not_found" || st.Reason == "" {
				t.Errorf("refused: code %q, reason %q; want not_found and a reason", st.Code, st.Reason)
			}
			if left := redisStock(t, b, p.ID); left != 4 {
				t.Errorf("redis stock %d, want 4 (the refused order's 2 units back)", left)
			}
		})
		t.Run("stock lowered", func(t *testing.T) {
			shop := newShops(t, b, 1, order.Options{})[0]
			p := queued(t, b, "lowered", 5)
			if err := b.DB.DB().Exec("UPDATE products SET stock = 1 WHERE id = ?", p.ID).Error; err != nil {
				t.Fatal(err)
			}
			// Accepted before any consumer runs (a shop's Place would learn
			// the sell-out from its own consumer and refuse at once).
			ids := acceptAll(t, b, p.ID, "a", "b", "c")
			status(t, shop, ids[0]) // starts the shop's consumer
			drained(t, shop, p.ID)
			created, refused := 0, 0
			for _, id := range ids {
				switch st := status(t, shop, id); st.Status {
				case order.StatusCreated:
					created++
				case order.StatusRefused:
					refused++
					if st.Code != "sold_out" {
						t.Errorf("refused with %q, want sold_out", st.Code)
					}
				}
			}
			if created != 1 || refused != 2 {
				t.Errorf("created %d, refused %d; want 1 and 2", created, refused)
			}
			a := audit(t, shop, p.ID)
			if a.Sold != 1 || a.Stock != 0 || a.RedisStock == nil || a.Drift != 0 {
				t.Errorf("audit: sold %d, stock %d, redis %v, drift %d; want 1, 0, 0, 0", a.Sold, a.Stock, deref(a.RedisStock), a.Drift)
			}
		})
	})
}

// acceptAll queues one unit of product for each user, through no shop,
// and returns the orders' ids.
func acceptAll(t *testing.T, b *testenv.Env, product string, users ...string) []string {
	t.Helper()
	q := redisqueue.New(b.Redis.Clients()[0])
	var ids []string
	for _, u := range users {
		o := redisqueue.Order{ID: randomID(), UserID: u, ProductID: product, Quantity: 1, CreatedAt: time.Now().UTC()}
		if _, err := q.AcceptBy(context.Background(), o, time.Time{}); err != nil {
			t.Fatalf("Accept: %v", err)
		}
		ids = append(ids, o.ID)
	}
	return ids
}

// redisStock reads product's stock from node 0.
func redisStock(t *testing.T, b *testenv.Env, product string) int {
	t.Helper()
	n, err := b.Redis.Clients()[0].Get(context.Background(), "flashsale:stock:{"+product+"}").Int()
	if err != nil {
		t.Fatalf("redis stock: %v", err)
	}
	return n
}
