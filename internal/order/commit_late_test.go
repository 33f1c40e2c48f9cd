package order_test

import (
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestLateCommit: every order (for redis-decr every group commit) holds
// back its commit and its lock renewals for three TTLs after its
// statements ran, then commits regardless of the lock. Each lease runs
// out under its holder, the next buyer reads the stock before the old
// commit lands, and lua oversells, every time; fenced makes the next
// holder's transaction wait for the old one before it reads, the
// database's row lock (sql-for-update) and version (sql-version) are held
// or checked until the commit lands, and the lock-free strategies have no
// lease to lose: they sell exactly the stock.
func TestLateCommit(t *testing.T) {
	// Half the sale under -short: every commit is late, so each unit costs
	// the exact strategies a late commit's wait in turn.
	buyerCount, units := testenv.Short(15, 20), testenv.Short(4, 5)
	cases := []struct {
		name  strategy.Name
		exact bool
	}{
		{strategy.Lua, false},
		{strategy.Fenced, true},
		{strategy.SQLForUpdate, true},
		{strategy.SQLVersion, true},
		{strategy.SQLAtomic, true},
		{strategy.SQLOneTrip, true},
		{strategy.RedisDecr, true},
	}
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, c := range cases {
			t.Run(string(c.name), func(t *testing.T) {
				shops := newShops(t, b, 3, order.Options{LockWait: 30 * time.Second})
				p := newProduct(t, b, "late-"+string(c.name), stock.Product{Strategy: c.name, Stock: units,
					LockTTL: 100 * time.Millisecond, LateCommit: 300 * time.Millisecond, LateCommitEvery: 1})

				out := rush(t, shops, buyers(p.ID, buyerCount))

				a := audit(t, shops[0], p.ID)
				var late int64
				for _, s := range shops {
					late += s.Events(p.ID).LateCommits
				}
				switch {
				case c.name == strategy.RedisDecr:
					// One per transaction, and a group commit writes
					// the orders that waited for it together.
					if late < 1 || late > out.ok.Load() {
						t.Errorf("late commits: got %d, want one per group commit: 1 to %d", late, out.ok.Load())
					}
				case late != out.ok.Load():
					t.Errorf("late commits: got %d, want one per order (%d)", late, out.ok.Load())
				}
				t.Logf("%s: %d late commits, %d orders, oversold %d, stock %d", c.name, late, a.Orders, a.Oversold, a.Stock)
				if !c.exact {
					if a.Oversold <= 0 || a.Consistent {
						t.Errorf("%s under late commits: oversold %d, consistent %v; want an oversell and a lost update (audit %+v)",
							c.name, a.Oversold, a.Consistent, a)
					}
					return
				}
				want := order.Audit{ProductID: p.ID, Strategy: c.name, InitialStock: units, Stock: 0,
					Orders: units, Sold: units, Consistent: true}
				checkExact(t, a, want)
			})
		}
	})
}
