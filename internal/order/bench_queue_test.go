package order_test

import (
	"context"
	"strconv"
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

// benchDrain is BenchmarkPlace's flow redis-queue/drain: b.N orders are
// accepted into a fresh product's queue by fillers goroutines while no
// consumer runs (untimed), then the shops' consumers are started and
// timed until the queue is drained. It reports written orders/s.
func benchDrain(b *testing.B, env *testenv.Env, shops []benchShop, fillers int) {
	if fillers < 2 {
		b.Skip("buyers only fill the queue here; the 64-buyer runs measure the drain")
	}
	ctx := context.Background()
	id := env.Redis.Key("drain-" + strconv.FormatInt(products0.Add(1), 10))
	// Created as AddProduct would, but without watching it: no consumer
	// may start before the queue is full.
	p, err := stock.NewStore(shops[0].db).Create(ctx, stock.Product{ID: id, Stock: stock.MaxStock, Strategy: strategy.RedisQueue})
	if err != nil {
		b.Fatal(err)
	}
	q := shops[0].queue
	if err := q.Load(ctx, p.ID, p.Stock); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range fillers {
		wg.Go(func() {
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				o := redisqueue.Order{ID: randomID(), UserID: "u" + strconv.FormatInt(users.Add(1), 10),
					ProductID: p.ID, Quantity: 1, CreatedAt: time.Now().UTC()}
				if _, err := q.AcceptBy(ctx, o, time.Time{}); err != nil {
					b.Error(err)
					return
				}
				first.CompareAndSwap(nil, o.ID)
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		return
	}
	b.ResetTimer()
	start := time.Now()
	for _, s := range shops { // asking for an order starts its product's consumer
		if _, err := s.shop.OrderStatus(ctx, first.Load().(string)); err != nil {
			b.Fatal(err)
		}
	}
	waitDrained(b, shops[0].shop, p.ID)
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "orders/s")
	forgetOrders(b, shops[0].redis, p.ID)
}

// forgetOrders deletes the one key per accepted order that queue keeps for
// a day (flashsale:queue:order:{<order id>}, for GET /orders/{id}) for
// every order of product. Those keys are named by order id, not by the
// test's prefix, so testenv's cleanup does not find them: a run of
// BenchmarkPlace would otherwise leave hundreds of thousands on the real
// node. The buyers hash (buyer -> order id) names them.
func forgetOrders(b *testing.B, c redis.UniversalClient, product string) {
	ctx := context.Background()
	buyers := "flashsale:queue:buyers:{" + product + "}"
	iter := c.HScan(ctx, buyers, 0, "", 1000).Iterator()
	var keys []string
	flush := func() {
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				b.Errorf("delete the orders' keys of %s: %v", product, err)
			}
			keys = keys[:0]
		}
	}
	for field := true; iter.Next(ctx); field = !field {
		if !field { // HSCAN yields field, value, field, value...
			keys = append(keys, "flashsale:queue:order:{"+iter.Val()+"}")
		}
		if len(keys) == 500 {
			flush()
		}
	}
	flush()
	if err := iter.Err(); err != nil {
		b.Errorf("scan the buyers of %s: %v", product, err)
	}
}

// waitDrained waits until product's queue has nothing left to write, for
// at most a minute.
func waitDrained(b *testing.B, shop *order.Service, product string) {
	deadline := time.Now().Add(time.Minute)
	for {
		bl, err := shop.QueueBacklog(context.Background(), product)
		if err == nil && bl.Drained() {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("queue of %s not drained within a minute: %+v, %v", product, bl, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
