package scenario

import (
	"context"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// --count runs each row N times on fresh products; the row keeps them all.
func TestRunCountRunsEachRowNTimes(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Strategies = []Strategy{Strategy(strategy.Lua), Strategy(strategy.SQLAtomic)}
	s.Users, s.Stock, s.Rate, s.Count = 40, 10, 2000, 3
	out, err := Run(context.Background(), s, fleet.ExternalFleet([]string{srv.URL}, "tok", nil), Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(out.Strategies) != 2 {
		t.Fatalf("rows: %d, want 2", len(out.Strategies))
	}
	for _, m := range out.Strategies {
		if len(m.Runs) != 3 {
			t.Fatalf("%s: %d runs, want 3", m.Strategy, len(m.Runs))
		}
		products := map[string]bool{}
		for _, r := range m.Runs {
			products[r.ProductID] = true
			if r.Audit.Orders != s.Stock {
				t.Errorf("%s %s: %d orders, want %d: each run sells a fresh product", m.Strategy, r.ProductID, r.Audit.Orders, s.Stock)
			}
		}
		if len(products) != 3 {
			t.Errorf("%s: products %v, want 3 distinct", m.Strategy, products)
		}
	}
}

// --users 0 sends a fresh buyer per click for the whole --duration at the
// Vegeta rate given.
func TestRunOpenModel(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Strategies = []Strategy{Strategy(strategy.SQLAtomic)}
	s.Users, s.Stock, s.Rate, s.RatePer, s.Duration = 0, 1000, 50, 100*time.Millisecond, 400*time.Millisecond
	out, err := Run(context.Background(), s, fleet.ExternalFleet([]string{srv.URL}, "tok", nil), Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	m := out.Strategies[0]
	if m.Planned != 200 || m.Sent < 150 || m.Sent > 200 {
		t.Errorf("planned %d, sent %d; want 200 planned (500/s for 400ms) and about as many sent", m.Planned, m.Sent)
	}
	if m.Tally.DupRejected() != 0 || m.Tally.Created != m.Tally.Requests {
		t.Errorf("answers %+v: want an order for every click, no repeated buyer", m.Tally)
	}
}

// A sweep runs every row at each rate.
func TestSweepRunsEachRate(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings().ForSweep(func(string) bool { return false })
	s.Strategies, s.Duration = []Strategy{Strategy(strategy.Lua), Strategy(strategy.SQLAtomic)}, 200*time.Millisecond
	rates := []vegeta.Rate{{Freq: 100, Per: time.Second}, {Freq: 40, Per: 100 * time.Millisecond}}
	out, err := Sweep(context.Background(), s, fleet.ExternalFleet([]string{srv.URL}, "tok", nil), Options{}, rates)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if len(out.Sweep) != 2 || len(out.Strategies) != 0 {
		t.Fatalf("points %d, rows %d; want 2 points and no rows of its own", len(out.Sweep), len(out.Strategies))
	}
	for i, p := range out.Sweep {
		if p.Rate != rates[i] || len(p.Strategies) != 2 {
			t.Errorf("point %d: rate %v, %d rows; want %v and 2", i, p.Rate, len(p.Strategies), rates[i])
		}
		for _, m := range p.Strategies {
			want := int(float64(p.Rate.Freq) / p.Rate.Per.Seconds() * 0.2)
			if m.Planned != want {
				t.Errorf("point %d %s: planned %d, want %d", i, m.Strategy, m.Planned, want)
			}
		}
	}
}
