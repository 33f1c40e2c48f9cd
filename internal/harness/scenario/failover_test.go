package scenario_test

import (
	"context"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/strategy"
)

// One failover per attack, on real redis-server and redis-sentinel
// processes: the master is killed right after it granted the product lock
// its held replica never got. The promoted replica grants it again while
// the first holder works, and lua oversells; fenced stays exact, because
// the database refuses the second holder's fence. It skips without the
// binaries unless FLASHSALE_TEST_REQUIRE_SENTINEL=1.
func TestFailoverOversellsLuaNotFenced(t *testing.T) {
	env, fl := failoverFleet(t)

	// --failover's product (a 12 s lease, 3.5 s of work) with 2 units, to
	// 160 buyers at 40 req/s: eight seconds of clicks, long enough for the
	// round and for the stock to run out after it.
	s := oneFailover(strategy.Lua, strategy.Fenced)
	out, err := scenario.Run(context.Background(), s, fl, scenario.Options{RunID: runID(env)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, m := range out.Strategies {
		f := fault.Find[*fault.Failover](m.Records)
		t.Logf("%-6s 201=%d audit=%+v events=%+v failover=%+v\n       %s", m.Strategy, m.Tally.Created, m.Audit, m.Events, f, m.Why)
		if f == nil || len(f.Rounds) != 1 || f.Err != "" || !f.Rounds[0].Caught {
			t.Fatalf("%s: failover %+v, want one round that caught a holder, without error", m.Strategy, f)
		}
		if f.Rounds[0].Behind <= 0 || f.Rounds[0].Promoted <= 0 {
			t.Errorf("%s: round %+v, want the replica behind and a promotion time", m.Strategy, f.Rounds[0])
		}
		switch m.Strategy.Name() {
		case strategy.Lua:
			if m.Audit.Oversold < 1 || f.Rounds[0].GrantedTwice < 1 {
				t.Errorf("lua: oversold %d, granted twice %d; want both at least 1", m.Audit.Oversold, f.Rounds[0].GrantedTwice)
			}
		case strategy.Fenced:
			if m.Audit.Oversold != 0 || !m.Audit.Consistent || m.Audit.Sold != m.Audit.InitialStock {
				t.Errorf("fenced: audit %+v, want exactly the stock sold", m.Audit)
			}
		}
	}
}

// One failover in a redis-decr attack, on real processes: the master is
// killed once the database has sold units the held replica's stock still
// offers, so the promoted counter offers them again (phantom units, the
// drift). The database refuses them, and the shops' sweep lowers the
// counter to the database's stock: the drift is read back at 0, and the
// audit agrees. It skips without the binaries unless
// FLASHSALE_TEST_REQUIRE_SENTINEL=1.
func TestFailoverDriftRepaired(t *testing.T) {
	env, fl := failoverFleet(t)

	// Two units to 160 buyers at 40 req/s: eight seconds of clicks, past
	// the kill (once the first order is written, after 3.5 s of work) and
	// the promotion.
	s := oneFailover(strategy.RedisDecr)
	out, err := scenario.Run(context.Background(), s, fl, scenario.Options{RunID: runID(env)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	m := out.Strategies[0]
	f := fault.Find[*fault.Failover](m.Records)
	t.Logf("201=%d audit=%+v events=%+v failover=%+v drift=%+v\n       %s", m.Tally.Created, m.Audit, m.Events, f, f.Drift, m.Why)
	if f == nil || len(f.Rounds) != 1 || f.Err != "" || !f.Rounds[0].Caught || f.Drift == nil {
		t.Fatalf("failover %+v, want one round killed after a sale the replica had not heard of, without error, and the drift read", f)
	}
	if got := f.Rounds[0].Phantom; got != s.Stock {
		t.Errorf("phantom units of the promoted counter: got %d, want %d (every unit sold while the link was held)", got, s.Stock)
	}
	if d := f.Drift; d.Peak < 1 || d.Repaired < 0 || d.End != 0 {
		t.Errorf("drift %+v, want a peak of at least 1, repaired, 0 at the end", d)
	}
	a := m.Audit
	if a.Oversold != 0 || !a.Consistent || a.Sold != a.InitialStock || a.Drift == nil || *a.Drift != 0 {
		t.Errorf("audit %+v (drift %v), want exactly the stock sold and drift 0", a, a.Drift)
	}
	if bad := out.Unsafe(); len(bad) > 0 {
		t.Errorf("Unsafe() = %q, want none", bad)
	}
}

// failoverFleet starts the embedded fleet with a Sentinel set of real
// processes of its own for the single-node strategies (it skips without the
// binaries unless FLASHSALE_TEST_REQUIRE_SENTINEL=1).
func failoverFleet(t *testing.T) (*testenv.Env, *fleet.Fleet) {
	t.Helper()
	sentinels := testenv.NewSentinels(t)
	env := testenv.NewEnv(t, testenv.Embedded)
	f, err := fleet.StartFleet(context.Background(), fleet.FleetConfig{
		Backends:  &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.DirectAddrs(), Embedded: env.Redis.Embedded()},
		Sentinels: sentinels.Set(),
	})
	if err != nil {
		t.Fatalf("fleet.StartFleet: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return env, f
}

// oneFailover is --failover's product (a 12 s lease, 3.5 s of work, no
// stalls) with two units, for the given strategies, to 160 buyers at 40
// req/s, and one failover per attack.
func oneFailover(strategies ...strategy.Name) scenario.Settings {
	s := scenario.DefaultSettings()
	s.Strategies = nil
	for _, n := range strategies {
		s.Strategies = append(s.Strategies, scenario.Strategy(n))
	}
	s.LockTTL, s.Work, s.StallRate = fault.FailoverLockTTL, fault.FailoverWork, 0
	s.Stock, s.Users, s.Rate, s.Duration = 2, 160, 40, 20*time.Second
	s.Faults = []fault.Fault{&fault.SentinelFailover{Enabled: true, Rounds: 1}}
	return s
}
