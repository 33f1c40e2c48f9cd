package scenario_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/strategy"
)

// restartSale is the product of a --redis-restart run (no stalls, 10
// units; its lease and work below) sold to 80 buyers at 40 req/s, about
// four seconds of clicks, with three of the five nodes restarted as soon
// as a holder takes the lock, after delay.
func restartSale(delay time.Duration, strategies ...scenario.Strategy) scenario.Settings {
	s := scenario.DefaultSettings()
	s.Strategies, s.StallRate, s.Stock = strategies, 0, fault.RestartStock
	s.Users, s.Rate, s.Duration, s.Seed = 80, 40, 15*time.Second, 11
	s.Faults = []fault.Fault{&fault.EmptyRestart{Nodes: 3, Delay: delay}}
	// Wider than the load generator's product, for a loaded CI machine: a
	// restart that takes a few hundred milliseconds under -race still lands
	// inside the holder's 300 ms of work, and the holder's first renewal
	// (at a third of 2 s) still comes after its write.
	s.LockTTL, s.Work = 2*time.Second, 300*time.Millisecond
	return s
}

// startEmbeddedFleet runs three shops on the test's embedded backends,
// with the embedded nodes themselves handed to the fleet, as the load
// generator's own fleet has them: --redis-restart crashes them.
func startEmbeddedFleet(t *testing.T) (*fleet.Fleet, *testenv.Env) {
	t.Helper()
	env := testenv.NewEnv(t, testenv.Embedded)
	f, err := fleet.StartFleet(context.Background(), fleet.FleetConfig{
		Backends: &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.DirectAddrs(), Embedded: env.Redis.Embedded()},
	})
	if err != nil {
		t.Fatalf("fleet.StartFleet: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f, env
}

// Three of five nodes restarted empty under a holder: a second holder takes
// the three empty nodes, a majority, while the first still holds the other
// two, and redlock oversells. Fenced, whose fence counter restarted too,
// stays exact: the database refuses the second holder's fence.
func TestRedisRestartOversellsRedlock(t *testing.T) {
	testenv.SkipShort(t, "three nodes restarted under a holder; order's TestFenceRefusesStaleHolder checks the fence that keeps fenced exact")
	f, env := startEmbeddedFleet(t)
	s := restartSale(0, scenario.Strategy(strategy.Redlock), scenario.Strategy(strategy.Fenced))
	out, err := scenario.Run(context.Background(), s, f, scenario.Options{RunID: runID(env)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, m := range out.Strategies {
		a, r := m.Audit, fault.Find[*fault.Restart](m.Records)
		t.Logf("%-8s 201=%d errors=%v audit=%+v restart=%+v events=%+v\n         %s",
			m.Strategy, m.Tally.Created, m.Tally.Errors, a, r, m.Events, m.Why)
		if r == nil || !r.Restarted || r.Err != "" || len(r.Nodes) != 3 {
			t.Fatalf("%s: restart %+v, want 3 nodes restarted without error", m.Strategy, r)
		}
		if !strings.Contains(m.Why, "restarted empty") {
			t.Errorf("%s: why-line does not mention the restart: %s", m.Strategy, m.Why)
		}
		switch m.Strategy.Name() {
		case strategy.Redlock:
			// The second majority is what the audit shows; the watch that
			// counts it reads the nodes every millisecond, and on a loaded
			// machine may read past a short-lived one: it is logged, not
			// asserted.
			if r.GrantedWhileHeld < 1 {
				t.Logf("redlock: the watch saw %d tokens granted while the holder held", r.GrantedWhileHeld)
			}
			if a.Oversold < 1 || a.Consistent {
				t.Errorf("redlock: oversold %d, consistent %v; want at least 1, false", a.Oversold, a.Consistent)
			}
		case strategy.Fenced:
			if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent || a.Sold == 0 {
				t.Errorf("fenced: oversold %d, duplicate orders %d, consistent %v, sold %d; want 0, 0, true, some",
					a.Oversold, a.DuplicateOrders, a.Consistent, a.Sold)
			}
		}
	}
	if bad := out.Unsafe(); len(bad) > 0 {
		t.Errorf("Unsafe() = %q, want none (redlock is not held to an early restart)", bad)
	}
}

// Restarted after a delay of one TTL, the nodes come back when every lease
// they granted is over: no second majority, and both rows are exact.
func TestDelayedRedisRestartIsExact(t *testing.T) {
	testenv.SkipShort(t, "three nodes restarted a TTL late; TestRedlockSurvivesTwoNodesDown checks redlock with nodes down")
	f, env := startEmbeddedFleet(t)
	s := restartSale(2*time.Second, scenario.Strategy(strategy.Redlock), scenario.Strategy(strategy.Fenced)) // one TTL
	out, err := scenario.Run(context.Background(), s, f, scenario.Options{RunID: runID(env)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, m := range out.Strategies {
		a, r := m.Audit, fault.Find[*fault.Restart](m.Records)
		t.Logf("%-8s 201=%d errors=%v audit=%+v restart=%+v\n         %s", m.Strategy, m.Tally.Created, m.Tally.Errors, a, r, m.Why)
		if r == nil || !r.Restarted || r.Err != "" {
			t.Fatalf("%s: restart %+v, want the nodes restarted without error", m.Strategy, r)
		}
		if down := r.Back - r.At; down < s.LockTTL {
			t.Errorf("%s: nodes down for %v, want at least %v", m.Strategy, down, s.LockTTL)
		}
		if want := map[strategy.Name]int{strategy.Redlock: 0, strategy.Fenced: -1}[m.Strategy.Name()]; r.GrantedWhileHeld != want {
			t.Errorf("%s: granted while held %d, want %d", m.Strategy, r.GrantedWhileHeld, want)
		}
		if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent || a.Sold == 0 {
			t.Errorf("%s: oversold %d, duplicate orders %d, consistent %v, sold %d; want 0, 0, true, some",
				m.Strategy, a.Oversold, a.DuplicateOrders, a.Consistent, a.Sold)
		}
	}
	if bad := out.Unsafe(); len(bad) > 0 {
		t.Errorf("Unsafe() = %q, want none", bad)
	}
}
