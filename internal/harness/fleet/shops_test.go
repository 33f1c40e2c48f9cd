package fleet

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// The shops share the database and the Redis servers and nothing else: a
// product one shop created sells through another, and a third audits the
// sale. The shops' settings reach each of them: here the per-buyer rate.
func TestShopsShareTheirBackends(t *testing.T) {
	env := testenv.NewEnv(t, testenv.Embedded)
	f, err := StartFleet(t.Context(), FleetConfig{Backends: &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()},
		BuyerRate: 0.5, BuyerBurst: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := NewAPI(f.Targets[0], f.AdminToken).CreateProduct(t.Context(), Product{ID: "p", Name: "p", Stock: 5, Strategy: "sql-atomic", LockTTLMs: 100}); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		shop, buyer string
		want        int
	}{
		{f.Targets[1], "u1", http.StatusCreated},
		{f.Targets[2], "u2", http.StatusCreated},
		{f.Targets[2], "u2", http.StatusTooManyRequests}, // the buyer's second click within its rate
	} {
		resp, err := http.Post(tc.shop+"/api/v1/orders", "application/json", strings.NewReader(`{"user_id":"`+tc.buyer+`","product_id":"p","quantity":1}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("order %d: %d, want %d", i+1, resp.StatusCode, tc.want)
		}
	}
	if a, err := NewAPI(f.Targets[0], f.AdminToken).Audit(t.Context(), "p"); err != nil || a.Sold != 2 || a.Stock != 3 || !a.Consistent {
		t.Errorf("audit = %+v, %v; want the two orders of the two other shops", a, err)
	}
}

// Close lets the orders in flight finish: a sale inside its critical
// section when Close begins is answered, and written.
func TestCloseLetsOrdersFinish(t *testing.T) {
	env := testenv.NewEnv(t, testenv.Embedded)
	f, err := StartFleet(t.Context(), FleetConfig{Shops: 1, Backends: &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}})
	if err != nil {
		t.Fatal(err)
	}
	api := NewAPI(f.Targets[0], f.AdminToken)
	if err := api.CreateProduct(t.Context(), Product{ID: "slow", Name: "slow", Stock: 1, Strategy: "lua", LockTTLMs: 2000, WorkMs: 400}); err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		resp, err := http.Post(f.Targets[0]+"/api/v1/orders", "application/json", strings.NewReader(`{"user_id":"u","product_id":"slow","quantity":1}`))
		if err != nil {
			answered <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	// Until the order is inside its 400 ms of work: in flight, and holding
	// the product's lock (in flight alone is also true before the lock).
	lock := env.Redis.Clients()[0]
	testenv.WaitFor(t, 10*time.Second, "the order inside its critical section", func() bool {
		return inFlight(t, f.Targets[0]) && lock.Exists(t.Context(), "flashsale:lock:{slow}").Val() == 1
	})
	f.Close()
	if got := <-answered; !strings.HasPrefix(got, "201 ") {
		t.Fatalf("the order in flight at Close: %s, want 201", got)
	}
	var sold int
	if err := env.DB.DB().Raw("SELECT COUNT(*) FROM orders WHERE product_id = ?", "slow").Scan(&sold).Error; err != nil || sold != 1 {
		t.Errorf("orders written: %d, %v; want the one answered", sold, err)
	}
}

// inFlight reports whether the shop at target works on an order now, as
// its /metrics say.
func inFlight(t *testing.T, target string) bool {
	resp, err := http.Get(target + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(b), "\nflashsale_orders_in_flight 1\n")
}

// The shops wait for a product lock as long as the fleet says: by default
// DefaultLockWait, a second, shorter than a shop's own, so that an
// overloaded lock shows as 503 lock_timeout at once.
func TestShopsWaitTheLockWait(t *testing.T) {
	testenv.SkipShort(t, "waits out two lock waits")
	env := testenv.NewEnv(t, testenv.Embedded)
	for _, tc := range []struct {
		wait, want time.Duration
	}{{0, DefaultLockWait}, {300 * time.Millisecond, 300 * time.Millisecond}} {
		f, err := StartFleet(t.Context(), FleetConfig{Shops: 1, LockWait: tc.wait, Backends: &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}})
		if err != nil {
			t.Fatal(err)
		}
		id := "held-" + tc.want.String()
		if err := NewAPI(f.Targets[0], f.AdminToken).CreateProduct(t.Context(), Product{ID: id, Name: id, Stock: 5, Strategy: "lua", LockTTLMs: 10000, WorkMs: 1500}); err != nil {
			t.Fatal(err)
		}
		order := func(buyer string) (int, string, time.Duration) {
			start := time.Now()
			resp, err := http.Post(f.Targets[0]+"/api/v1/orders", "application/json", strings.NewReader(`{"user_id":"`+buyer+`","product_id":"`+id+`","quantity":1}`))
			if err != nil {
				return 0, err.Error(), time.Since(start)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, string(b), time.Since(start)
		}
		go order("holder") // holds the lock for its 1.5 s of work
		for !inFlight(t, f.Targets[0]) {
			time.Sleep(5 * time.Millisecond)
		}
		code, body, took := order("waiter")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "lock_timeout") || took < tc.want || took > tc.want+900*time.Millisecond {
			t.Errorf("lock wait %v: the waiter got %d %s after %v, want 503 lock_timeout after %v", tc.wait, code, body, took, tc.want)
		}
		f.Close()
	}
}
