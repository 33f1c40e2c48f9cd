package why

import (
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// defaults are the load generator's default product: a 100 ms TTL, 2 ms of
// work, 8% of sales stalled 300 ms.
var defaults = Settings{LockTTL: 100 * time.Millisecond, Work: 2 * time.Millisecond, Stall: 300 * time.Millisecond, StallRate: 0.08, Batch: 64}

// sale is a row of st that sold sold units of 100 with created 201s, and
// a stock left that makes overwritten of them lost updates.
func sale(st strategy.Name, sold, overwritten, created int) Row {
	return Row{Strategy: st, Settings: defaults, Planned: 10, Sent: 10,
		Audit: tally.Audit{InitialStock: 100, Sold: sold, Stock: 100 - sold + overwritten, Oversold: max(sold-100, 0)},
		Tally: tally.Answers{Created: created}}
}

func intp(n int) *int { return &n }

// facts are every fact m's line states but the faults' own, in the order
// the line states them: what tests read.
func facts(m Row) map[string]float64 {
	out := map[string]float64{}
	all := append(lateCommits(m), states(m, mechanismOf(m.Strategy).figures)...)
	all = append(all, states(m, closing)...)
	for _, f := range all {
		out[f.name] = f.value
	}
	return out
}

// Each strategy's clause states the figures that back its mechanism, and
// leaves out those that say nothing; the values are what the row
// measured. (The words are free to change.)
func TestMechanismFigures(t *testing.T) {
	for _, tc := range []struct {
		name string
		row  func() Row
		want map[string]float64
		not  []string
	}{
		{"off oversells and duplicates", func() Row {
			m := sale(strategy.Off, 227, 127, 227)
			m.Audit.DuplicateOrders = 64
			return m
		}, map[string]float64{"overwritten": 127, "oversold": 127, "duplicate_orders": 64}, []string{"hint", "sold"}},
		{"off without a race", func() Row { return sale(strategy.Off, 100, 0, 100) },
			map[string]float64{"overwritten": 0, "hint": 0}, nil},
		{"naive under stalls", func() Row { return sale(strategy.Naive, 164, 64, 100) },
			map[string]float64{"stalled": 8, "sold": 164, "overwritten": 64, "two_holders": 64, "oversold": 64}, []string{"hint", "renewed_every", "work_over_ttl"}},
		{"naive with nothing outliving its TTL", func() Row {
			m := sale(strategy.Naive, 100, 0, 100)
			m.Settings.StallRate = 0
			return m
		}, map[string]float64{"hint": 0, "oversold": 0}, []string{"stalled"}},
		{"naive whose work outlasts the TTL", func() Row {
			m := sale(strategy.Naive, 103, 3, 100)
			m.Settings.Work, m.Settings.StallRate = 150*time.Millisecond, 0
			return m
		}, map[string]float64{"work_over_ttl": 0.05, "overwritten": 3}, []string{"stalled", "hint"}},
		{"lua renews through the stalls", func() Row { return sale(strategy.Lua, 100, 0, 100) },
			map[string]float64{"stalled": 8, "renewed_every": 0.033, "overwritten": 0, "oversold": 0}, []string{"two_holders"}},
		{"redlock without stalls", func() Row {
			m := sale(strategy.Redlock, 100, 0, 100)
			m.Settings.StallRate = 0
			return m
		}, map[string]float64{"sold": 100}, []string{"stalled", "renewed_every"}},
		{"fenced fences out", func() Row {
			m := sale(strategy.Fenced, 100, 0, 100)
			m.Events.FencedOut = 12
			return m
		}, map[string]float64{"fenced_out": 12, "overwritten": 0}, []string{"stalled"}},
		{"redis-decr gives back and reclaims", func() Row {
			m := sale(strategy.RedisDecr, 100, 0, 100)
			m.Events.GivenBack, m.Events.Reclaimed = 3, 2
			m.Audit.Drift = intp(0)
			return m
		}, map[string]float64{"given_back": 3, "reclaimed": 2, "drift": 0}, []string{"overwritten"}},
		{"redis-decr whose Redis did not answer", func() Row {
			m := sale(strategy.RedisDecr, 100, 0, 100)
			m.Audit.RedisError = "dial tcp: refused"
			return m
		}, map[string]float64{"drift_unknown": 1, "given_back": 0}, []string{"reclaimed", "drift"}},
		{"redis-queue drains", func() Row {
			m := sale(strategy.RedisQueue, 100, 0, 0)
			m.Tally.Queued = 100
			m.Drain = &tally.Drain{Took: 1200 * time.Millisecond}
			m.Audit.Drift = intp(-1)
			return m
		}, map[string]float64{"queued": 100, "drain_seconds": 1.2, "drift": -1}, []string{"queue_refused", "undrained"}},
		{"redis-queue that did not drain", func() Row {
			m := sale(strategy.RedisQueue, 90, 0, 0)
			m.Drain, m.Events.QueueRefused = &tally.Drain{Err: "not drained within 1m0s"}, 4
			return m
		}, map[string]float64{"undrained": 1, "queue_refused": 4, "sold": 90}, []string{"drain_seconds"}},
		{"a strategy with no entry", func() Row { return sale("chubby", 100, 0, 100) },
			map[string]float64{"sold": 100, "overwritten": 0, "oversold": 0, "duplicate_orders": 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.row()
			got := facts(m)
			for name, want := range tc.want {
				if v, ok := got[name]; !ok || v < want-0.001 || v > want+0.001 {
					t.Errorf("%s = %v (stated %v), want %v; line %q", name, v, ok, want, Line(m))
				}
			}
			for _, name := range tc.not {
				if _, ok := got[name]; ok {
					t.Errorf("%s stated, want it left out; line %q", name, Line(m))
				}
			}
		})
	}
}

// Every strategy has its own clause: a new one must say what guards it.
func TestEveryStrategyHasAMechanism(t *testing.T) {
	for _, st := range strategy.All() {
		m, ok := mechanisms[st]
		if !ok || m.guard == "" || len(m.figures) == 0 {
			t.Errorf("%s: no mechanism in the table", st)
		}
	}
}

// A late commit is stated for every row it held back; against the TTL,
// with the leases run out, only where a lease held the stock.
func TestLateCommits(t *testing.T) {
	for _, tc := range []struct {
		st      strategy.Name
		late    time.Duration
		leased  bool
		ranOut  bool
		commits int64
	}{
		{strategy.Lua, 300 * time.Millisecond, true, true, 3},
		{strategy.Fenced, 50 * time.Millisecond, true, false, 4},
		{strategy.Redlock, 100 * time.Millisecond, true, false, 2},
		{strategy.Etcd, 300 * time.Millisecond, false, false, 6},      // a lease of a second at least
		{strategy.ZooKeeper, 300 * time.Millisecond, false, false, 7}, // the session is the lease
		{strategy.SQLAtomic, 300 * time.Millisecond, false, false, 5},
		{strategy.RedisDecr, 300 * time.Millisecond, false, false, 1},
	} {
		m := sale(tc.st, 100, 0, 100)
		m.Settings.LateCommit, m.Events.LateCommits = tc.late, tc.commits
		f := lateCommits(m)
		if len(f) != 1 || f[0].value != float64(tc.commits) {
			t.Fatalf("%s: late commits %+v, want %d", tc.st, f, tc.commits)
		}
		if got := strings.Contains(f[0].text, "TTL"); got != tc.leased {
			t.Errorf("%s: %q compares with the TTL: %v, want %v", tc.st, f[0].text, got, tc.leased)
		}
		if got := strings.Contains(f[0].text, "ran out"); got != tc.ranOut {
			t.Errorf("%s: %q says the leases ran out: %v, want %v", tc.st, f[0].text, got, tc.ranOut)
		}
		if !strings.HasPrefix(Line(m), f[0].text+"; ") {
			t.Errorf("%s: line %q does not open with the late commits", tc.st, Line(m))
		}
	}
	if f := lateCommits(sale(strategy.Lua, 100, 0, 100)); f != nil {
		t.Errorf("no late commit: %+v, want nothing said", f)
	}
	for late, want := range map[time.Duration]string{50 * time.Millisecond: "within", 100 * time.Millisecond: "as long as", 300 * time.Millisecond: "longer than"} {
		if got := againstTTL(Settings{LockTTL: 100 * time.Millisecond, LateCommit: late}); !strings.HasPrefix(got, want+" the 100ms TTL") {
			t.Errorf("againstTTL(%v) = %q, want %q the 100ms TTL", late, got, want)
		}
	}
}

// What any row may end with, each stated only when it happened.
func TestClosingClauses(t *testing.T) {
	m := sale(strategy.Fenced, 100, 0, 100)
	m.Batched, m.Lost, m.Sent = true, 2, 7
	m.Events.Batches, m.Events.BatchedBuyers, m.Events.LocksLost = 4, 10, 3
	m.Tally.Errors = map[string]int{"503 lock_timeout": 5, "0 connection refused": 1}
	got := facts(m)
	for name, want := range map[string]float64{"lost": 2, "per_batch": 2.5, "locks_lost": 3, "errors": 6, "sent": 7} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	if line := Line(m); !strings.HasSuffix(line, "--duration ended the attack after 7 of 10 clicks") {
		t.Errorf("line %q does not end with the attack cut short", line)
	}
	quiet := facts(sale(strategy.Fenced, 100, 0, 100))
	for _, name := range []string{"lost", "per_batch", "locks_lost", "errors", "sent"} {
		if _, ok := quiet[name]; ok {
			t.Errorf("%s stated for a row where it did not happen", name)
		}
	}
	m.Batched = false
	if _, ok := facts(m)["per_batch"]; ok {
		t.Error("batches stated for a row that does not batch")
	}
}

// clause is a fault's record that says what it was told to.
type clause string

func (c clause) Why(fault.Sale) string { return string(c) }

// The faults' clauses open the line, in the order the faults were armed,
// each with what it is given of the sale; then the strategy's clause.
func TestLineComposesTheFaultsClauses(t *testing.T) {
	m := sale(strategy.Redlock, 101, 1, 100)
	m.Records = fault.Records{clause("a restart"), clause("a kill")}
	line := Line(m)
	if !strings.HasPrefix(line, "a restart; a kill; "+mechanisms[strategy.Redlock].guard+": ") {
		t.Errorf("line %q, want the faults' clauses first, then redlock's", line)
	}
	if got := m.Records.Clauses(fault.Sale{}); len(got) != 2 {
		t.Errorf("%d clauses, want 2", len(got))
	}
}

// The cost lists the errors most frequent first, ties by name.
func TestErrorSummary(t *testing.T) {
	got := errorSummary(tally.Answers{Errors: map[string]int{"503 unavailable": 3, "503 lock_timeout": 12, "0 eof": 3}})
	if want := "503 lock_timeout×12, 0 eof×3, 503 unavailable×3"; got != want {
		t.Errorf("errorSummary = %q, want %q", got, want)
	}
}

// The clauses come in their order: the faults', the late commits', the
// strategy's, then the closing ones.
func TestLineOrder(t *testing.T) {
	m := sale(strategy.Fenced, 100, 0, 100)
	m.Records = fault.Records{clause("FAULT")}
	m.Settings.LateCommit, m.Events.LateCommits = 300*time.Millisecond, 2
	m.Tally.Errors = map[string]int{"503 busy": 4}
	line := Line(m)
	at := func(s string) int {
		i := strings.Index(line, s)
		if i < 0 {
			t.Fatalf("line %q has no %q", line, s)
		}
		return i
	}
	if a, b, c, d := at("FAULT"), at("2 commits were held back"), at(mechanisms[strategy.Fenced].guard), at("cost: 503 busy×4"); !(a < b && b < c && c < d) {
		t.Errorf("line %q: clauses out of order", line)
	}
	for _, tc := range []struct {
		about string
		facts []fact
		want  string
	}{
		{"", nil, ""},
		{"no lock", nil, "no lock"},
		{"", []fact{{text: "a"}, {text: "b"}}, "a, b"},
		{"no lock", []fact{{text: "a"}}, "no lock: a"},
	} {
		if got := sentence(tc.about, tc.facts); got != tc.want {
			t.Errorf("sentence(%q, %v) = %q, want %q", tc.about, tc.facts, got, tc.want)
		}
	}
}
