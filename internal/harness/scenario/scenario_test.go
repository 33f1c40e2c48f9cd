package scenario_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/strategy"
)

// smallSale is 60 buyers for 10 units, with settings that make the race
// certain: a 50 ms critical section at 60 req/s keeps about three buyers
// inside it at once (off oversells), and half the sales stall for 300 ms,
// three times the 100 ms TTL, so a naive lock expires under its holder
// while buyers wait (the chance that none of the 10 sales stalls is 0.5^10,
// about 0.1%). The rate is modest so that the run stays meaningful under
// the race detector on two cores, where everything is several times
// slower; the crowd is small so that each row's three seconds of clicks
// keep the whole table within a minute.
func smallSale() scenario.Settings {
	s := scenario.DefaultSettings()
	s.Users, s.Stock, s.Clicks = 60, 10, 3
	s.Rate, s.Duration = 60, 15*time.Second
	s.LockTTL, s.Work, s.Stall, s.StallRate = 100*time.Millisecond, 50*time.Millisecond, 300*time.Millisecond, 0.5
	s.Seed = 11
	return s
}

// startFleet runs three real shops (app.NewShop each) on the test's
// backends and an etcd cluster of the same mode, with --redlock-kill going
// through the test's Redis proxies, and the test's ZooKeeper ensemble
// where FLASHSALE_TEST_ZOOKEEPER names one (withoutZooKeeper).
func startFleet(t *testing.T, env *testenv.Env) *fleet.Fleet {
	t.Helper()
	ctx := context.Background()
	b := &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs(), EtcdEndpoints: env.WithEtcd(t).Etcd.Endpoints()}
	if os.Getenv(testenv.EnvZooKeeper) != "" {
		b.ZooKeeper = testenv.NewZooKeeper(t).Servers()
	}
	f, err := fleet.StartFleet(ctx, fleet.FleetConfig{Backends: b, Nodes: proxyNodes{env.Redis}})
	if err != nil {
		t.Fatalf("fleet.StartFleet: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// proxyNodes takes the test's Redis nodes down through testenv, which cuts
// this test's proxies (and, embedded, closes the node), so that other tests
// sharing the real servers are not disturbed.
type proxyNodes struct{ r *testenv.RedisNodes }

func (p proxyNodes) Describe() string { return "testenv: node stopped behind its proxy" }

func (p proxyNodes) Kill(_ context.Context, nodes []int, _ time.Duration) (func(context.Context) error, error) {
	for _, i := range nodes {
		p.r.Stop(i)
	}
	return func(context.Context) error {
		for _, i := range nodes {
			p.r.Start(i)
		}
		return nil
	}, nil
}

// smallerSale is smallSale for go test -short: 40 buyers for 10 units,
// and six rows, one per kind of flow: off (which
// still oversells without a stall), a lease, the lock-free two, the queue
// and a batch. Naive's oversell is order's TestUnsafeModesOversell, the
// other locks' exact sales order's TestSafeModesSellExactly and, for
// redlock here, TestRedlockSurvivesTwoNodesDown.
func smallerSale() scenario.Settings {
	s := smallSale()
	s.Users, s.Stock = 40, 10
	s.Strategies = []scenario.Strategy{"off", "lua", "sql-atomic", "redis-decr", "redis-queue", "fenced+batch"}
	return s
}

// withoutZooKeeper is s without its zookeeper row where no ensemble is
// named: no ZooKeeper server runs in process (zklock's and order's tests
// cover the lock; here the row runs where CI starts an ensemble).
func withoutZooKeeper(s scenario.Settings) scenario.Settings {
	if os.Getenv(testenv.EnvZooKeeper) == "" {
		s.Strategies = slices.DeleteFunc(slices.Clone(s.Strategies), func(m scenario.Strategy) bool { return m.Name() == strategy.ZooKeeper })
	}
	return s
}

func runID(env *testenv.Env) string { return strings.ReplaceAll(env.Redis.Prefix(), ":", "") }

func TestScenarioShowsTheLesson(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		f := startFleet(t, env)
		s := withoutZooKeeper(testenv.Short(smallerSale(), smallSale()))
		out, err := scenario.Run(context.Background(), s, f, scenario.Options{RunID: runID(env)})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got, want := len(out.Strategies), len(s.Strategies); got != want {
			t.Fatalf("strategies run: got %d, want %d", got, want)
		}
		for _, m := range out.Strategies {
			a := m.Audit
			t.Logf("%-8s 201=%d sold_out=%d dup=%d errors=%v audit=%+v\n         %s", m.Strategy,
				m.Tally.Created, m.Tally.SoldOut, m.Tally.DupRejected(), m.Tally.Errors, a, m.Why)
			if m.Sent != m.Planned {
				t.Errorf("%s: sent %d of %d clicks", m.Strategy, m.Sent, m.Planned)
			}
			switch m.Strategy.Name() {
			case strategy.Off, strategy.Naive:
				if a.Oversold <= 0 {
					t.Errorf("%s: oversold %d, want > 0 (the race is certain with these settings)", m.Strategy, a.Oversold)
				}
			default:
				// Always true: never more than the stock, never twice to
				// one buyer, stock and orders agree, and for redis-decr
				// Redis agrees too.
				if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent || a.Sold > s.Stock {
					t.Errorf("%s: oversold %d, duplicate orders %d, consistent %v, sold %d of %d; want 0, 0, true, at most %d",
						m.Strategy, a.Oversold, a.DuplicateOrders, a.Consistent, a.Sold, s.Stock, s.Stock)
				}
				// Selling something is what makes the above mean anything.
				// Redlock's five parallel round trips, each with a ~100 ms
				// budget, can all miss it when the race detector slows this
				// process on two cores; then it refuses cleanly (503) and
				// the row only says so.
				switch {
				case a.Sold == 0 && m.Strategy.Name() != strategy.Redlock:
					t.Errorf("%s sold nothing: answers %v", m.Strategy, m.Tally.Errors)
				case a.Sold == 0:
					t.Logf("redlock sold nothing in this run: answers %v", m.Tally.Errors)
				}
				if s := m.Strategy.Name(); (s == strategy.RedisDecr || s == strategy.RedisQueue) && (a.Drift == nil || *a.Drift != 0) {
					t.Errorf("%s: drift %v (%s), want 0", s, a.Drift, a.RedisError)
				}
				if a.Orders != m.Tally.Accepted() || m.Lost != 0 {
					t.Errorf("%s: audit has %d orders, buyers got %d 201s and 202s, %d of them not written",
						m.Strategy, a.Orders, m.Tally.Accepted(), m.Lost)
				}
				if m.Strategy.Name().Queues() && (m.Tally.Queued == 0 || m.Drain == nil || m.Drain.Err != "") {
					t.Errorf("%s: %d 202s, drain %+v; want 202s and a drain", m.Strategy, m.Tally.Queued, m.Drain)
				}
			}
		}
		if bad := out.Unsafe(); len(bad) > 0 {
			t.Errorf("Unsafe() = %q, want none", bad)
		}

		dir := t.TempDir()
		if err := report.Write(dir, out); err != nil {
			t.Fatalf("report.Write: %v", err)
		}
		for _, name := range []string{report.JSONFile, report.MarkdownFile, report.HTMLFile} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("report file: %v", err)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, report.JSONFile))
		if err != nil {
			t.Fatal(err)
		}
		var doc report.Document
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("report.json: %v", err)
		}
		for i, strategy := range s.Strategies {
			if i >= len(doc.Strategies) || doc.Strategies[i].Strategy != string(strategy) {
				t.Fatalf("report.json strategies %+v, want %v in order", doc.Strategies, s.Strategies)
			}
			raw, err := report.ReadRaw(filepath.Join(dir, doc.Strategies[i].RawResults))
			if err != nil || len(raw) != doc.Strategies[i].Answers.Requests {
				t.Errorf("%s raw results: %d read (%v), want %d", strategy, len(raw), err, doc.Strategies[i].Answers.Requests)
			}
		}
	})
}

// Under --late-commit every lease without a fencing token breaks: lua
// oversells; fenced and the lock-free strategies sell exactly the stock,
// and the rows say how many commits were late.
func TestLateCommitScenario(t *testing.T) {
	testenv.SkipShort(t, "five rows of late commits; order's TestLateCommit checks lua, fenced, sql-atomic and redis-decr under them")
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		f := startFleet(t, env)
		s := smallSale()
		s.Strategies = []scenario.Strategy{"lua", "fenced", "sql-atomic", "redis-decr", "fenced+batch"}
		s.Work, s.StallRate = 2*time.Millisecond, 0
		s.LateCommit, s.LateCommitEvery = 300*time.Millisecond, 3
		out, err := scenario.Run(context.Background(), s, f, scenario.Options{RunID: runID(env)})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		for _, m := range out.Strategies {
			a := m.Audit
			t.Logf("%-10s 201=%d errors=%v audit=%+v events=%+v\n           %s", m.Strategy,
				m.Tally.Created, m.Tally.Errors, a, m.Events, m.Why)
			if m.Events.LateCommits == 0 {
				t.Errorf("%s: no late commits", m.Strategy)
			}
			if !strings.Contains(m.Why, "held back") {
				t.Errorf("%s: why line does not mention the late commits: %s", m.Strategy, m.Why)
			}
			if m.Strategy == "lua" {
				if a.Oversold <= 0 {
					t.Errorf("lua: oversold %d, want > 0 under late commits", a.Oversold)
				}
				continue
			}
			if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent || a.Sold != s.Stock {
				t.Errorf("%s: oversold %d, duplicate orders %d, consistent %v, sold %d; want 0, 0, true, %d",
					m.Strategy, a.Oversold, a.DuplicateOrders, a.Consistent, a.Sold, s.Stock)
			}
		}
		if bad := out.Unsafe(); len(bad) > 0 {
			t.Errorf("Unsafe() = %q, want none (lua is not held to late commits)", bad)
		}
	})
}

// Two of five Redlock nodes go down halfway through the attack: the
// majority holds, and nothing is oversold.
func TestRedlockSurvivesTwoNodesDown(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		f := startFleet(t, env)
		s := testenv.Short(smallerSale(), smallSale())
		s.Strategies = []scenario.Strategy{"redlock"}
		s.Faults = []fault.Fault{fault.RedlockKill(2)}
		s.Work, s.StallRate = 10*time.Millisecond, 0.05
		out, err := scenario.Run(context.Background(), s, f, scenario.Options{RunID: runID(env)})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		m := out.Strategies[0]
		a := m.Audit
		t.Logf("201=%d errors=%v audit=%+v\n%s", m.Tally.Created, m.Tally.Errors, a, m.Why)
		if k := fault.Find[*fault.Kill](m.Records); k == nil || len(k.Nodes) != 2 || k.Err != "" {
			t.Fatalf("kill record %+v, want 2 nodes down without error", k)
		}
		if a.Oversold != 0 || a.DuplicateOrders != 0 || !a.Consistent {
			t.Errorf("oversold %d, duplicate orders %d, consistent %v; want 0, 0, true",
				a.Oversold, a.DuplicateOrders, a.Consistent)
		}
	})
}
