package order_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/queue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
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
				o := queue.Order{ID: randomID(), UserID: "u" + strconv.FormatInt(users.Add(1), 10),
					ProductID: p.ID, Quantity: 1, CreatedAt: time.Now().UTC()}
				if _, err := q.Accept(ctx, o); err != nil {
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
