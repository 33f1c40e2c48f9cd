package order_test

import (
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestSafeModesSellExactly: 500 distinct buyers race for 50 units on three
// shop instances. Every safe strategy sells exactly the stock, also when
// some critical sections stall for longer than the lock's TTL (the
// watchdog keeps the lock; the lock-free strategies have none to lose),
// and redis-decr ends with Redis and the database agreeing. On a Redis
// Cluster too (without the stall), where the single-node roles live on
// the product's slot's master.
func TestSafeModesSellExactly(t *testing.T) {
	const buyerCount, units = 500, 50
	type scenario struct {
		name string
		p    stock.Product
	}
	scenarios := []scenario{
		{"no stall", stock.Product{Stock: units, LockTTL: 2 * time.Second, Work: time.Millisecond}},
		// Two of the fifty critical sections stall for 2.5 TTLs; under
		// -short one stalls for 1.5 TTLs. (A shorter TTL makes Redlock's
		// per-node timeout, a tenth of the TTL, too short for the embedded
		// nodes under -race.)
		{"stall longer than TTL", stock.Product{Stock: units, LockTTL: 500 * time.Millisecond,
			Work: time.Millisecond, Stall: testenv.Short(750*time.Millisecond, 1250*time.Millisecond), StallRate: 0.04}},
	}
	run := func(t *testing.T, b *testenv.Env, scenarios []scenario) {
		b.WithEtcd(t)
		for _, mode := range safe {
			for _, sc := range scenarios {
				t.Run(string(mode)+"/"+sc.name, func(t *testing.T) {
					if _, locks := mode.LockMode(); sc.p.Stall > 0 && !locks {
						testenv.SkipShort(t, "a stall where there is no lock to lose; the no-stall row checks this strategy")
					}
					stalls := everyNth{n: testenv.Short[int64](buyerCount, 25)} // under -short only the first sale stalls
					shops := newShops(t, b, 3, order.Options{LockWait: 30 * time.Second, Rand: stalls.Rand})
					p := sc.p
					p.Strategy = mode
					if mode == strategy.Redlock && p.Stall > 0 {
						// Redlock gives each node a tenth of the TTL to
						// answer: 50ms is missed when a busy CI machine
						// runs the embedded nodes under -race, the
						// watchdog's renewals fail, and the lock is lost
						// (honestly: a buyer is answered lock_lost, nothing
						// is oversold). Twice the TTL, twice the stall.
						p.LockTTL, p.Stall = 2*p.LockTTL, 2*p.Stall
					}
					p = newProduct(t, b, string(mode), p)

					out := rush(t, shops, buyers(p.ID, buyerCount))

					if got := out.ok.Load(); got != units {
						t.Errorf("orders placed: got %d, want %d", got, units)
					}
					if got := out.soldOut.Load(); got != buyerCount-units {
						t.Errorf("sold out answers: got %d, want %d", got, buyerCount-units)
					}
					if sc.p.Stall > 0 && stalls.stalls.Load() == 0 {
						t.Errorf("no critical section stalled; the scenario did not test the watchdog")
					}
					want := order.Audit{ProductID: p.ID, Strategy: mode, InitialStock: units, Stock: 0,
						Orders: units, Sold: units, Oversold: 0, DuplicateOrders: 0, Consistent: true}
					checkExact(t, audit(t, shops[0], p.ID), want)
				})
			}
		}
	}
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) { run(t, b, scenarios) })
	// On a Cluster the roles that need one Redis live on the product's
	// slot's master; the watchdog under a stall is the same as on the
	// real nodes, checked above.
	testenv.Cluster(t, func(t *testing.T, b *testenv.Env) { run(t, b, scenarios[:1]) })
}

// safe lists the strategies that claim to sell exactly the stock.
var safe = []strategy.Name{strategy.Lua, strategy.Redlock, strategy.Fenced, strategy.Etcd,
	strategy.SQLForUpdate, strategy.SQLVersion, strategy.SQLAtomic, strategy.SQLOneTrip, strategy.RedisDecr}

// TestUnsafeModesOversell: with settings that make the race certain, off
// and naive sell more than the stock, and the audit says so.
func TestUnsafeModesOversell(t *testing.T) {
	scenarios := []struct {
		name   string
		buyers int
		p      stock.Product
	}{
		// Every buyer reads the stock before the first one writes it back.
		{"off", 100, stock.Product{Strategy: strategy.Off, Stock: 10, Work: 50 * time.Millisecond}},
		// Every critical section outlasts the TTL: the lock expires under
		// its holder, the next buyer gets in and reads the same stock.
		{"naive", 40, stock.Product{Strategy: strategy.Naive, Stock: 10, LockTTL: 50 * time.Millisecond,
			Stall: 200 * time.Millisecond, StallRate: 1}},
	}
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				shops := newShops(t, b, 3, order.Options{LockWait: 30 * time.Second})
				p := newProduct(t, b, sc.name, sc.p)

				out := rush(t, shops, buyers(p.ID, sc.buyers))

				a := audit(t, shops[0], p.ID)
				if a.Oversold <= 0 {
					t.Errorf("audit oversold: got %d, want > 0 (audit %+v)", a.Oversold, a)
				}
				if a.Consistent {
					t.Errorf("audit consistent: got true, want false (audit %+v)", a)
				}
				if got, want := a.Orders, int(out.ok.Load()); got != want {
					t.Errorf("audit orders: got %d, want %d (the Place calls that succeeded)", got, want)
				}
				if got, want := a.Oversold, a.Sold-a.InitialStock; got != want {
					t.Errorf("audit oversold: got %d, want sold-initial = %d", got, want)
				}
				t.Logf("%s: %d buyers, %d units: %d orders, oversold %d, stock left %d",
					sc.name, sc.buyers, p.InitialStock, a.Orders, a.Oversold, a.Stock)
			})
		}
	})
}
