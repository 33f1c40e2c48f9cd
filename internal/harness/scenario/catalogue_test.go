package scenario_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/strategy"
)

// catalogueSale is smallSale's race spread over 20 products under the
// default Zipf skew: 300 buyers for 100 units, 5 a product. The hottest
// product draws about a third of the crowd, about 30 clicks a second at
// 90 req/s, with 50 ms of work: off's buyers overlap inside it and naive's
// lock expires under its stalled holders, while the coldest products see
// a handful of buyers each.
func catalogueSale() scenario.Settings {
	s := smallSale()
	s.Users, s.Stock, s.Rate, s.StallRate = 300, 100, 90, 0.3
	s.Duration = 30 * time.Second
	s.Products, s.Skew = 20, scenario.DefaultSkew
	return s
}

// A 20-product Zipf catalogue is exact for every product, each product
// audited from its own answers, and the row's figures are the products'
// sums; off and naive still oversell. One row per kind of flow that keeps
// its stock apart per product (a lock, the database, Redis, the queue):
// every row, on the real backends too, is scripts/results/catalogue.sh's.
// Twenty products' lock rows on one SQLite writer under the race detector
// sell too little in a test's time to mean anything (fenced+batch sold
// none in CI). On the embedded backends only: the real ones add nothing a
// product's keys and rows could cross (each script's keys share one
// product's hash tag).
func TestCatalogueExactPerProduct(t *testing.T) {
	env := testenv.NewEnv(t, testenv.Embedded).WithEtcd(t)
	f := startFleet(t, env)
	s := catalogueSale()
	s.Strategies = []scenario.Strategy{"off", "naive", "lua", "sql-atomic", "redis-decr", "redis-queue"}
	out, err := scenario.Run(context.Background(), s, f, scenario.Options{RunID: runID(env)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, m := range out.Strategies {
		if len(m.Products) != s.Products {
			t.Fatalf("%s: %d products audited, want %d", m.Strategy, len(m.Products), s.Products)
		}
		var audits []tally.Audit
		buyers, requests, exact, oversold := 0, 0, 0, 0
		for _, p := range m.Products {
			audits = append(audits, p.Audit)
			buyers += p.Buyers
			requests += p.Tally.Requests
			if p.Audit.ProductID != p.ID {
				t.Errorf("%s: product %s audited as %s", m.Strategy, p.ID, p.Audit.ProductID)
			}
			// Every order a buyer was told of is written; one more is
			// written only for a click that got no answer in time.
			if m.Strategy.Safe() && (p.Audit.Orders < p.Tally.Accepted() || (p.Audit.Orders > p.Tally.Accepted() && p.Tally.ErrorCount() == 0)) {
				t.Errorf("%s/%s: %d orders written, its own buyers were told %d: answers %+v", m.Strategy, p.ID, p.Audit.Orders, p.Tally.Accepted(), p.Tally)
			}
			if p.Exact() {
				exact++
			}
			if p.Audit.Oversold > 0 {
				oversold++
			}
		}
		t.Logf("%-12s sold %d of %d, oversold %d (in %d products), %d of %d products exact; hottest %d buyers, coldest %d",
			m.Strategy, m.Audit.Sold, m.Audit.InitialStock, m.Audit.Oversold, oversold, exact, len(m.Products),
			m.Products[0].Buyers, m.Products[len(m.Products)-1].Buyers)
		if buyers != s.Users || requests != m.Tally.Requests {
			t.Errorf("%s: products have %d buyers and %d answers, the crowd %d and %d", m.Strategy, buyers, requests, s.Users, m.Tally.Requests)
		}
		if sum := tally.SumAudits(audits); sum.Sold != m.Audit.Sold || sum.Oversold != m.Audit.Oversold || m.Audit.InitialStock != s.Stock {
			t.Errorf("%s: row audit %+v is not the products' sum %+v of %d units", m.Strategy, m.Audit, sum, s.Stock)
		}
		if hot, cold := m.Products[0].Buyers, m.Products[len(m.Products)-1].Buyers; hot < 5*cold {
			t.Errorf("%s: hottest product has %d buyers, coldest %d: want a Zipf skew", m.Strategy, hot, cold)
		}
		switch m.Strategy.Name() {
		case strategy.Off, strategy.Naive:
			if m.Audit.Oversold == 0 {
				t.Errorf("%s: no product oversold, want the hot product's race to show", m.Strategy)
			}
		default:
			if exact != len(m.Products) {
				for _, p := range m.Products {
					if !p.Exact() {
						t.Errorf("%s/%s: not exact: audit %+v, lost %d, early sold out %d", m.Strategy, p.ID, p.Audit, p.Lost, p.EarlySoldOut)
					}
				}
			}
			if m.Audit.Sold == 0 {
				t.Errorf("%s sold nothing: answers %v", m.Strategy, m.Tally.Errors)
			}
		}
	}
	if bad := out.Unsafe(); len(bad) > 0 {
		t.Errorf("Unsafe() = %q, want none", bad)
	}
}
