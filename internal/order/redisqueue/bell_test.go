package redisqueue

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// blockHook records every XREADGROUP that asked Redis to block.
type blockHook struct {
	mu     sync.Mutex
	reads  int
	blocks int
}

func (h *blockHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *blockHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.EqualFold(cmd.Name(), "xreadgroup") {
			h.mu.Lock()
			h.reads++
			for _, a := range cmd.Args() {
				if s, ok := a.(string); ok && strings.EqualFold(s, "block") {
					h.blocks++
				}
			}
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (h *blockHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestConsumersParkNoReadPerProduct: a shop consuming twenty products parks
// no read on Redis (none of its XREADGROUPs blocks), so the connections it
// holds waiting do not grow with its products; its own accepts ring its
// consumers, and each product's order is written. An order another shop
// queued is found by the poll.
func TestConsumersParkNoReadPerProduct(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		hook := &blockHook{}
		c := redis.NewClient(&redis.Options{Addr: r.Addrs()[0], DisableIdentity: true})
		t.Cleanup(func() { _ = c.Close() })
		c.AddHook(hook)
		q := New(c)
		w := &countWriter{}
		cs := NewConsumers(q, w, ConsumerOptions{Writers: 2})
		defer cs.Close()
		const products = 20
		ps := make([]string, products)
		for i := range ps {
			ps[i] = r.Key("bell-" + strconv.Itoa(i))
			if err := q.Load(ctx, ps[i], 10); err != nil {
				t.Fatal(err)
			}
			cs.KeepConsuming(ps[i])
		}
		for _, p := range ps {
			if _, err := q.Accept(ctx, Order{ID: uuid.NewString(), UserID: "u", ProductID: p, Quantity: 1, CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "every product's order to be written", func() bool { return w.n.Load() == products })

		other := New(r.Clients()[0]) // another shop's queue: it rings nobody here
		if _, err := other.Accept(ctx, Order{ID: uuid.NewString(), UserID: "v", ProductID: ps[0], Quantity: 1, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "another shop's order to be written", func() bool { return w.n.Load() == products+1 })

		hook.mu.Lock()
		defer hook.mu.Unlock()
		if hook.reads == 0 || hook.blocks != 0 {
			t.Errorf("the consumers of %d products sent %d XREADGROUPs, %d of them blocking; want some, none blocking",
				products, hook.reads, hook.blocks)
		}
	})
}

// TestClosedConsumersHearNoBell: Consumers closed on a Queue that lives on
// (a shop's service rebuilt on it, tests sharing one) are forgotten by its
// bells: the accepts do not go on ringing them, nor keep them in memory.
func TestClosedConsumersHearNoBell(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx, _, q, p := loadedQueue(t, r, "closedbell", 10)
		for range 3 {
			cs := NewConsumers(q, &countWriter{}, ConsumerOptions{Writers: 2})
			cs.KeepConsuming(p)
			cs.Close()
		}
		w := &countWriter{}
		cs := NewConsumers(q, w, ConsumerOptions{Writers: 2})
		defer cs.Close()
		cs.KeepConsuming(p)
		if _, err := q.Accept(ctx, rvOrder(p, "u")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the order to be written", func() bool { return w.n.Load() == 1 })
		q.bells.mu.Lock()
		defer q.bells.mu.Unlock()
		if n := len(q.bells.ringers); n != 1 {
			t.Errorf("the queue rings %d Consumers, 3 of them closed; want only the open one", n)
		}
	})
}
