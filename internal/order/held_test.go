package order_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestRowHoldIsObserved: on SQLite behind netsim's RTT, the strategies
// without a lock tell how long each sale held the database's one write
// lock, or their window (sql-version), to the observer and in the
// product's Events: at least the round trips strategy's table counts on
// SQLite, and less than the order took less its first round trip (the
// BEGIN, or sql-version's read, that the hold starts after).
func TestRowHoldIsObserved(t *testing.T) {
	b := testenv.NewEnv(t, testenv.Embedded)
	const rtt = 10 * time.Millisecond
	r, err := netsim.ParseRTT(rtt.String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := database.OpenSQLite(ctx, b.DB.Path(), database.WithConnector(netsim.New(r).Connector))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	heard := &heldLog{}
	shop := shopOn(t, b, db, order.Options{Observer: heard})
	for _, tc := range []struct {
		name string
		p    stock.Product
	}{
		{"sql-atomic", stock.Product{Strategy: strategy.SQLAtomic}},
		{"sql-atomic-k4", stock.Product{Strategy: strategy.SQLAtomic, Buckets: 4}},
		{"sql-version", stock.Product{Strategy: strategy.SQLVersion}},
		{"sql-for-update", stock.Product{Strategy: strategy.SQLForUpdate}},
		{"off", stock.Product{Strategy: strategy.Off}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := tc.p.Strategy.Holds()
			least := h.Time(r, 0, true)
			tc.p.Stock, tc.p.LockTTL = 10, 10*time.Second
			p := newProduct(t, b, tc.name, tc.p)
			mustPlace(ctx, t, shop, p.ID, "first") // the product's cache and the connection
			before := heard.total(p.Strategy)
			start := time.Now()
			mustPlace(ctx, t, shop, p.ID, "second")
			took := time.Since(start)
			e := shop.Events(p.ID)
			if e.Holds != 2 {
				t.Fatalf("Events: %d holds after 2 orders, want 2", e.Holds)
			}
			d := heard.total(p.Strategy) - before
			if d < least || d > took-rtt {
				t.Errorf("held %v; want at least %v (the table's trips on SQLite) and at most %v (the order's %v less a trip)",
					d, least, took-rtt, took)
			}
			t.Logf("held %v of the order's %v; the table counts %v", d, took, least)
			if e.Held < d {
				t.Errorf("Events: held %v in all, less than the second order's %v", e.Held, d)
			}
		})
	}
}

// heldLog sums the holds an Observer hears of, by strategy. Safe for
// concurrent use.
type heldLog struct {
	mu   sync.Mutex
	held map[strategy.Name]time.Duration
}

func (l *heldLog) Held(s strategy.Name, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[strategy.Name]time.Duration{}
	}
	l.held[s] += d
}

func (l *heldLog) total(s strategy.Name) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[s]
}

func (*heldLog) Placed(strategy.Name, string, time.Duration)     {}
func (*heldLog) LockWaited(strategy.Name, string, time.Duration) {}
func (*heldLog) Happened(strategy.Name, order.Event)             {}
func (*heldLog) Batched(strategy.Name, int)                      {}
