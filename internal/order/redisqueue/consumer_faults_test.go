package redisqueue_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
)

type countingWriter struct {
	closed  atomic.Bool
	after   atomic.Int64
	calls   atomic.Int64
	running atomic.Int64
}

func (w *countingWriter) WriteQueued(ctx context.Context, _ string, orders []redisqueue.Order) ([]*redisqueue.Refusal, int, error) {
	w.running.Add(1)
	defer w.running.Add(-1)
	if w.closed.Load() {
		w.after.Add(1)
	}
	w.calls.Add(1)
	time.Sleep(200 * time.Millisecond)
	return make([]*redisqueue.Refusal, len(orders)), 100, nil
}

// Close stops every consumer, no write runs or starts after it.
func TestConsumersCloseNoLeak(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		q := redisqueue.New(r.Clients()[0])
		before := runtime.NumGoroutine()
		w := &countingWriter{}
		cs := redisqueue.NewConsumers(q, w, redisqueue.ConsumerOptions{ClaimIdle: 50 * time.Millisecond, BatchMax: 2})
		var ps []string
		for i := range 5 {
			p := r.Key("close" + strconv.Itoa(i))
			ps = append(ps, p)
			if err := q.Load(ctx, p, 1000); err != nil {
				t.Fatal(err)
			}
			cs.KeepConsuming(p)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = q.Accept(ctx, order(ps[i%5], "u"+strconv.Itoa(i), 1))
			}
		})
		time.Sleep(700 * time.Millisecond)
		cs.Close()
		w.closed.Store(true)
		if n := w.running.Load(); n != 0 {
			t.Errorf("%d writes still running after Close returned", n)
		}
		cs.KeepConsuming(ps[0])
		time.Sleep(500 * time.Millisecond)
		close(stop)
		wg.Wait()
		if w.after.Load() != 0 {
			t.Errorf("%d writes started after Close", w.after.Load())
		}
		time.Sleep(200 * time.Millisecond)
		if after := runtime.NumGoroutine(); after > before+2 {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			if strings.Contains(string(buf[:n]), "internal/queue.") {
				t.Errorf("queue goroutines after Close:\n%s", buf[:n])
			} else {
				t.Logf("goroutines %d before, %d after Close; none in package redisqueue", before, after)
			}
		}
		t.Logf("calls %d", w.calls.Load())
	})
}

type failWriter struct{ calls atomic.Int64 }

func (w *failWriter) WriteQueued(ctx context.Context, _ string, orders []redisqueue.Order) ([]*redisqueue.Refusal, int, error) {
	w.calls.Add(1)
	return nil, 0, errors.New("dial tcp: connection refused")
}

type okWriter struct{}

func (okWriter) WriteQueued(ctx context.Context, _ string, orders []redisqueue.Order) ([]*redisqueue.Refusal, int, error) {
	time.Sleep(5 * time.Millisecond)
	return make([]*redisqueue.Refusal, len(orders)), 100000, nil
}

// A shop cut off from the database must not keep the entries it read: it
// waits longer than ClaimIdle after a failed write, so a shop that can
// write claims them first (before, it claimed them back itself the moment
// they could be claimed, and the healthy shop starved). The cut-off shop
// got 5 entries first; the healthy one must drain them.
func TestConsumersCutOffShopDoesNotStarveOthers(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, r *testenv.RedisNodes) {
		ctx := context.Background()
		q := redisqueue.New(r.Clients()[0])
		p := r.Key("starve")
		if err := q.Load(ctx, p, 100); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if _, err := q.Accept(ctx, order(p, "u"+strconv.Itoa(i), 1)); err != nil {
				t.Fatal(err)
			}
		}
		fw := &failWriter{}
		bad := redisqueue.NewConsumers(q, fw, redisqueue.ConsumerOptions{Name: "bad"})
		defer bad.Close()
		bad.KeepConsuming(p)
		for fw.calls.Load() == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		good := redisqueue.NewConsumers(q, okWriter{}, redisqueue.ConsumerOptions{Name: "good"})
		defer good.Close()
		good.KeepConsuming(p)
		start := time.Now()
		for time.Since(start) < 20*time.Second {
			if b, _ := q.Backlog(ctx, p); b.Drained() {
				t.Logf("drained after %v", time.Since(start))
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		pend, _ := r.Clients()[0].XPendingExt(ctx, &redis.XPendingExtArgs{Stream: redisqueue.StreamKey(p), Group: redisqueue.Group,
			Start: "-", End: "+", Count: 10}).Result()
		var owners []string
		for _, e := range pend {
			owners = append(owners, e.Consumer+"/deliveries="+strconv.FormatInt(e.RetryCount, 10))
		}
		t.Errorf("a healthy consumer ran for 20s beside the cut-off one; still pending: %v (failed writes %d)", owners, fw.calls.Load())
	})
}
