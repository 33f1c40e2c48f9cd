package order_test

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestNoGoroutineGrowth: rounds of rushes with late commits and
// cancellations, batched and not, on the same shops, leave no goroutine
// behind. Two counts say so, each waited for with a deadline:
//
//   - once the shops are idle, no more goroutines run code of package
//     order, or were started by it (a batch leader, a settlement), than
//     before the test opened any;
//   - once the shops are closed, with the database pool and the Redis
//     clients they had, the process has at most slack more goroutines than
//     after a warm-up round on other shops, closed the same way. A leak
//     anywhere in the flow's path, in any package, that grows with the
//     rounds exceeds it; connections pooled during the rounds do not
//     count, for they close with the shops.
func TestNoGoroutineGrowth(t *testing.T) {
	testenv.SkipShort(t, "five rounds of rushes to count goroutines; only the full run looks for leaks this way")
	const slack = 2 // less than the four rounds: one leaked per round fails
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		start, inFlow := runtime.NumGoroutine(), inOrderFlow()
		warm := openFleet(t, b)
		sellRounds(t, b, warm, 1)
		warm.close(t)
		// What the warm-up started once and for all (if anything) stays:
		// the baseline is what is left once the rest has ended.
		baseline := goroutinesDownTo(start + slack)

		f := openFleet(t, b)
		sellRounds(t, b, f, 4)
		testenv.WaitFor(t, 20*time.Second, "the goroutines of package order to end on idle shops", func() bool {
			return inOrderFlow() <= inFlow
		})
		noConnectionInUse(t, f.db)
		f.close(t)
		n := goroutinesDownTo(baseline + slack)
		t.Logf("goroutines: %d at the start, %d after the warm-up, %d after the rounds", start, baseline, n)
		if n > baseline+slack {
			t.Errorf("goroutines after the rounds, the shops closed: got %d, want at most %d (%d after the warm-up); by the function they run: %v",
				n, baseline+slack, baseline, goroutinesByFunction())
		}
	})
}

// sellRounds runs rounds on f's shops: per round, one rush of 20 buyers on
// a product of each kind, with late commits, and deadlines from 50 to
// 430 ms that end many of them half-way.
func sellRounds(t *testing.T, b *testenv.Env, f *fleet, rounds int) {
	t.Helper()
	ctx := context.Background()
	kinds := []struct {
		name  strategy.Name
		batch int
	}{{strategy.Fenced, 0}, {strategy.Fenced, 8}, {strategy.SQLAtomic, 0}, {strategy.RedisDecr, 0}, {strategy.Lua, 0}}
	for range rounds {
		for _, k := range kinds {
			// Created through the fleet: newProduct's own Redis clients would
			// stay open after the fleet closes.
			p, err := f.shops[0].AddProduct(ctx, stock.Product{
				ID:       b.Redis.Key("leak-" + string(k.name) + "-" + strconv.FormatInt(products.Add(1), 10)),
				Strategy: k.name, Stock: 5, BatchMax: k.batch,
				LockTTL: 100 * time.Millisecond, LateCommit: 150 * time.Millisecond, LateCommitEvery: 3})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(ctx, time.Duration(50+i*20)*time.Millisecond)
					defer cancel()
					f.shops[i%len(f.shops)].Place(ctx, order.Request{UserID: "u" + strconv.Itoa(i), ProductID: p.ID, Quantity: 1})
				})
			}
			wg.Wait()
		}
	}
}

// fleet is two shops on a database pool and Redis clients of their own, so
// that closing it ends every goroutine and connection it started.
type fleet struct {
	shops   []*order.Service
	db      *gorm.DB
	closers []func() error // in the order they run
	once    sync.Once
}

func openFleet(t *testing.T, b *testenv.Env) *fleet {
	t.Helper()
	f := &fleet{}
	f.db, _ = b.DB.OpenPool(t)
	opts := order.Options{LockWait: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)}
	var lockers, clients []func() error
	for range 2 {
		cs := b.Redis.Clients()
		ls := make(map[dlock.Mode]dlock.Locker)
		for _, m := range dlock.Modes() {
			l, err := dlock.New(m, cs)
			if err != nil {
				t.Fatalf("dlock.New(%s): %v", m, err)
			}
			ls[m] = l
			lockers = append(lockers, l.Close)
		}
		for _, c := range cs {
			clients = append(clients, c.Close)
		}
		opts.RedisDecr = redisstock.New(cs[0])
		f.shops = append(f.shops, order.NewService(f.db, stock.NewStore(f.db), ls, opts))
	}
	sqlDB, err := f.db.DB()
	if err != nil {
		t.Fatal(err)
	}
	f.closers = append(append(lockers, clients...), sqlDB.Close)
	t.Cleanup(func() { f.close(t) })
	return f
}

// close closes f's shops, then their lockers, their Redis clients and
// their pool. A shop's Close that does not return within 30 s (a batch
// leader or a settlement that never ends) fails t, and f stays open.
func (f *fleet) close(t *testing.T) {
	t.Helper()
	f.once.Do(func() {
		done := make(chan struct{})
		go func() {
			for _, s := range f.shops {
				s.Close()
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("Service.Close did not return within 30s: a batch leader or a settlement never ends")
			return
		}
		for _, c := range f.closers {
			c()
		}
	})
}

// inOrderFlow counts the goroutines that run code of package order, or
// were started by it (a goroutine's stack names the function that started
// it). The tests' own code, package order_test, does not count.
func inOrderFlow() int {
	n := 0
	for _, g := range goroutines() {
		if strings.Contains(g, "flashsale/internal/order.") {
			n++
		}
	}
	return n
}

// goroutinesDownTo waits, for at most 20 seconds, until the process has at
// most limit goroutines, and returns how many it has then.
func goroutinesDownTo(limit int) int {
	n := runtime.NumGoroutine()
	for end := time.Now().Add(20 * time.Second); n > limit && time.Now().Before(end); n = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	return n
}

// goroutines returns the stack of every goroutine, one per element.
func goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// goroutinesByFunction counts the goroutines by the function on top of
// their stacks, for a message.
func goroutinesByFunction() map[string]int {
	m := map[string]int{}
	for _, g := range goroutines() {
		if lines := strings.Split(g, "\n"); len(lines) > 1 {
			fn := lines[1]
			if i := strings.LastIndex(fn, "("); i > 0 {
				fn = fn[:i] // without the arguments
			}
			m[fn]++
		}
	}
	return m
}
