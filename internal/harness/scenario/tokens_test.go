package scenario_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestScenarioWithBuyerTokens: shops started with a buyer secret refuse an
// unsigned click, and the crowd, signing with the same secret, buys as it
// does from open shops: no click refused for its token.
func TestScenarioWithBuyerTokens(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		b := &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}
		f, err := fleet.StartFleet(context.Background(), fleet.FleetConfig{Backends: b, BuyerSecret: "scenario-test-secret-16+"})
		if err != nil {
			t.Fatalf("fleet.StartFleet: %v", err)
		}
		t.Cleanup(func() { f.Close() })

		resp, err := http.Post(f.Targets[0]+"/api/v1/orders", "application/json",
			strings.NewReader(`{"user_id":"u","product_id":"p","quantity":1}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("unsigned click: %d, want 401", resp.StatusCode)
		}

		s := scenario.DefaultSettings()
		s.Users, s.Stock, s.Clicks, s.Rate = 30, 10, 2, 300
		s.Strategies = []scenario.Strategy{scenario.Strategy(strategy.Lua), scenario.Strategy(strategy.SQLAtomic)}
		out, err := scenario.Run(context.Background(), s, f, scenario.Options{RunID: runID(env)})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		for _, m := range out.Strategies {
			if n := m.Tally.Status[http.StatusUnauthorized] + m.Tally.Status[http.StatusForbidden]; n > 0 {
				t.Errorf("%s: %d clicks refused for their token; answers %v", m.Strategy, n, m.Tally.Errors)
			}
			if m.Audit.Sold != s.Stock || m.Audit.Orders != m.Tally.Accepted() {
				t.Errorf("%s: sold %d of %d, %d orders for %d accepted; want the stock sold, every order accepted",
					m.Strategy, m.Audit.Sold, s.Stock, m.Audit.Orders, m.Tally.Accepted())
			}
		}
	})
}
