package redisqueue_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
)

// order is one unit of product for user, with a fresh id.
func order(product, user string, qty int) redisqueue.Order {
	return redisqueue.Order{ID: uuid.NewString(), UserID: user, ProductID: product, Quantity: qty, CreatedAt: time.Now().UTC()}
}

// stockOf reads product's stock from c.
func stockOf(t *testing.T, c *redis.Client, product string) int {
	t.Helper()
	n, err := c.Get(context.Background(), "flashsale:stock:{"+product+"}").Int()
	if err != nil {
		t.Fatalf("stock: %v", err)
	}
	return n
}

// TestAccept: the script takes units and queues the order in one step, or
// changes nothing: a crowd of buyers gets exactly the stock, each repeated
// click is refused naming the buyer's order, and an order larger than
// what is left is refused whole.
func TestAccept(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		c := r.Clients()[0]
		q := redisqueue.New(c)
		p := r.Key("accept")
		if _, err := q.Accept(ctx, order(p, "early", 1)); !errors.Is(err, stock.ErrNotLoaded) {
			t.Fatalf("before Load: got %v, want stock.ErrNotLoaded", err)
		}
		if err := q.Load(ctx, p, 10); err != nil {
			t.Fatal(err)
		}

		t.Run("crowd", func(t *testing.T) {
			var accepted, soldOut, dup atomic.Int64
			var wg sync.WaitGroup
			for i := range 30 {
				for range 2 { // every buyer clicks twice
					wg.Go(func() {
						_, err := q.Accept(ctx, order(p, "u"+strconv.Itoa(i), 1))
						switch {
						case err == nil:
							accepted.Add(1)
						case errors.Is(err, stock.ErrSoldOut):
							soldOut.Add(1)
						case errors.Is(err, stock.ErrDuplicate):
							dup.Add(1)
						default:
							t.Errorf("Accept: %v", err)
						}
					})
				}
			}
			wg.Wait()
			if accepted.Load() != 10 {
				t.Errorf("accepted %d, want 10 (sold out %d, duplicate %d)", accepted.Load(), soldOut.Load(), dup.Load())
			}
			if left := stockOf(t, c, p); left != 0 {
				t.Errorf("stock %d, want 0", left)
			}
			b, err := q.Backlog(ctx, p)
			if err != nil || b.Length != 10 || b.Pending != 0 || b.Lag() != 10 {
				t.Errorf("backlog %+v, %v; want 10 queued, none pending", b, err)
			}
		})

		t.Run("duplicate names the order", func(t *testing.T) {
			p := r.Key("dup")
			if err := q.Load(ctx, p, 5); err != nil {
				t.Fatal(err)
			}
			first := order(p, "alice", 1)
			if _, err := q.Accept(ctx, first); err != nil {
				t.Fatal(err)
			}
			_, err := q.Accept(ctx, order(p, "alice", 1))
			var dup *redisqueue.DuplicateError
			if !errors.As(err, &dup) || dup.Order != first.ID {
				t.Fatalf("second click: got %v, want a DuplicateError naming %s", err, first.ID)
			}
			if left := stockOf(t, c, p); left != 4 {
				t.Errorf("stock %d, want 4: a refused click takes nothing", left)
			}
			st, err := q.Status(ctx, first.ID)
			if err != nil || st.Status != redisqueue.StatusQueued || st.ProductID != p {
				t.Errorf("status: %+v, %v; want queued for %s", st, err, p)
			}
		})

		t.Run("sold out changes nothing", func(t *testing.T) {
			p := r.Key("short")
			if err := q.Load(ctx, p, 2); err != nil {
				t.Fatal(err)
			}
			if _, err := q.Accept(ctx, order(p, "bob", 3)); !errors.Is(err, stock.ErrSoldOut) {
				t.Fatalf("3 of 2: got %v, want stock.ErrSoldOut", err)
			}
			if left := stockOf(t, c, p); left != 2 {
				t.Errorf("stock %d, want 2", left)
			}
			if b, _ := q.Backlog(ctx, p); b.Length != 0 {
				t.Errorf("backlog %+v, want empty", b)
			}
			if _, err := q.Accept(ctx, order(p, "bob", 2)); err != nil {
				t.Errorf("2 of 2 by the same buyer after the refusal: %v", err)
			}
		})

		if _, err := q.Status(ctx, uuid.NewString()); !errors.Is(err, stock.ErrUnknownOrder) {
			t.Errorf("unknown order: got %v, want stock.ErrUnknownOrder", err)
		}
	})
}
