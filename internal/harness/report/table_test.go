package report

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// A row's cells, one per column, as the table writes them.
func TestRows(t *testing.T) {
	m := counted("redis-queue", 2*time.Second, 1200, 60, 40, map[string]int{"503 busy": 7, "503 lock_timeout": 3, "0 timeout": 2},
		1500*time.Microsecond, 1250*time.Millisecond)
	m.Tally.SoldOut, m.Tally.DuplicateRequests, m.Tally.DuplicateOrders = 1000, 70, 18
	m.Audit = tally.Audit{Orders: 100, Oversold: 0, DuplicateOrders: 0, Consistent: true}
	m.Drain, m.CPU = &tally.Drain{Took: 420 * time.Millisecond}, 250*time.Millisecond
	got := Rows(&scenario.Outcome{Strategies: []*scenario.StrategyResult{m}})[0]
	want := map[string]string{
		"strategy": "redis-queue", "reqs": "1200", "201": "60", "202": "40", "sold_out": "1000", "dup_rejected": "88",
		"errors": "0×2 503×10", "orders": "100", "oversold": "0", "dup_orders": "0", "consistent": "yes", "drain": "0.4s",
		"req/s": "600", "orders/s": "50", "cpu/order": "2.50ms", "p50": "1.5ms", "p95": "626ms", "p99": "1.25s",
	}
	if len(got) != len(Columns) {
		t.Fatalf("got %d cells, want one per column (%d)", len(got), len(Columns))
	}
	for i, col := range Columns {
		if got[i] != want[col] {
			t.Errorf("%s: got %q, want %q", col, got[i], want[col])
		}
	}
}

// The CPU per order and the drain say "-" where there is none.
func TestCPUAndDrainCells(t *testing.T) {
	for _, tc := range []struct {
		cpu     time.Duration
		created int
		want    string
	}{
		{-1, 100, "-"}, {time.Second, 0, "-"}, {time.Second, 400, "2.50ms"}, {84 * time.Millisecond, 100, "0.84ms"},
	} {
		m := &scenario.StrategyResult{CPU: tc.cpu, Tally: tally.Answers{Created: tc.created}}
		if got := cpuCell(m); got != tc.want {
			t.Errorf("cpuCell(%v for %d orders) = %q, want %q", tc.cpu, tc.created, got, tc.want)
		}
	}
	for _, tc := range []struct {
		d    *tally.Drain
		want string
	}{
		{nil, "-"}, {&tally.Drain{Took: 420 * time.Millisecond}, "0.4s"}, {&tally.Drain{Took: 60 * time.Second, Err: "waited 60s"}, "60s!"},
	} {
		if got := drainCell(tc.d); got != tc.want {
			t.Errorf("drainCell(%+v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// A cell is red for a broken promise, and says which; a --count row's is
// red if any run broke it.
func TestWrongCells(t *testing.T) {
	clean := func() *scenario.StrategyResult {
		return &scenario.StrategyResult{Audit: tally.Audit{InitialStock: 100, Orders: 100, Sold: 100, Consistent: true}}
	}
	for _, tc := range []struct {
		name  string
		spoil func(m *scenario.StrategyResult)
		want  map[string]string
	}{
		{"exact", func(*scenario.StrategyResult) {}, map[string]string{}},
		{"oversold", func(m *scenario.StrategyResult) { m.Audit.Oversold, m.Audit.Orders = 3, 103 },
			map[string]string{"oversold": "sold 3 more units than the stock"}},
		{"duplicated", func(m *scenario.StrategyResult) { m.Audit.DuplicateOrders = 2 },
			map[string]string{"dup_orders": "2 buyers hold more than one order"}},
		{"inconsistent", func(m *scenario.StrategyResult) { m.Audit.Consistent = false },
			map[string]string{"consistent": "stock left + sold is not the initial stock"}},
		{"orders lost", func(m *scenario.StrategyResult) { m.Lost = 4 },
			map[string]string{"orders": "4 buyers answered 201 or 202 without an order"}},
		{"one order lost", func(m *scenario.StrategyResult) { m.Lost = 1 },
			map[string]string{"orders": "1 buyer answered 201 or 202 without an order"}},
		{"queue undrained", func(m *scenario.StrategyResult) { m.Drain = &tally.Drain{Took: time.Minute, Err: "waited 60s"} },
			map[string]string{"drain": "the queue did not drain: waited 60s"}},
		{"a drained queue is fine", func(m *scenario.StrategyResult) { m.Drain = &tally.Drain{Took: time.Second} }, map[string]string{}},
		{"one --count run oversold, another duplicated", func(m *scenario.StrategyResult) {
			a, b, c := clean(), clean(), clean()
			b.Audit.Oversold, c.Audit.DuplicateOrders, c.Audit.Oversold = 2, 1, 1
			m.Runs = []*scenario.StrategyResult{a, b, c}
		}, map[string]string{"oversold": "sold 2 more units than the stock", "dup_orders": "1 buyer holds more than one order"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := clean()
			tc.spoil(m)
			if got := wrongCells(m); !maps.Equal(got, tc.want) {
				t.Errorf("wrongCells:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// A --count row's cell shows its median, and its min–max apart.
func TestTableCellsSplitTheSpread(t *testing.T) {
	o := countOutcome()
	cells := tableCells(o)
	i := slices.Index(Columns, "orders")
	if got, want := cells[1][i], (htmlCell{Text: "11", Spread: "10–12"}); got != want {
		t.Errorf("redlock orders over 3 runs: got %+v, want %+v", got, want)
	}
	if got := cells[0][i]; got.Spread != "" {
		t.Errorf("a row run once: spread %q, want none", got.Spread)
	}
}

// Column names may break after '_' and after a '/' that is not a unit's.
func TestHeaders(t *testing.T) {
	got := headers([]string{"dup_orders", "cpu/order", "orders/s", "shed p99", "a<b"})
	want := []string{"dup_<wbr>orders", "cpu/<wbr>order", "orders/s", "shed p99", "a&lt;b"}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("headers[%d] = %q, want %q", i, got[i], want[i])
		}
	}
}

// The settings line repeats the run: every fault flag it had, none it
// did not.
func TestSettingsLine(t *testing.T) {
	o := &scenario.Outcome{Settings: scenario.DefaultSettings()}
	o.Settings.Strategies = []scenario.Strategy{"lua", "fenced"}
	plain := settingsLine(o)
	for _, want := range []string{"--strategies lua,fenced ", "--rate 280 ", "--lock-ttl 100ms", "--seed 2011"} {
		if !strings.Contains(plain, want) {
			t.Errorf("settings line %q lacks %q", plain, want)
		}
	}
	if strings.Contains(plain, "--crash") || strings.Contains(plain, "--failover") || strings.Contains(plain, "--late-commit") {
		t.Errorf("settings line %q names a fault the run did not have", plain)
	}
	s := &o.Settings
	s.Faults = []fault.Fault{fault.RedlockKill(2), fault.EtcdKill(1), &fault.SentinelFailover{Enabled: true, Rounds: 3}, &fault.ShopCrash{Kills: 2}}
	s.LateCommit, s.LateCommitEvery = 300*time.Millisecond, 10
	line := settingsLine(o)
	for _, want := range []string{"--redlock-kill 2", "--etcd-kill 1", "--failover --failovers 3", "--crash 2",
		"--late-commit 300ms --late-commit-every 10"} {
		if !strings.Contains(line, want) {
			t.Errorf("settings line %q lacks %q", line, want)
		}
	}
	o.Sweep = countedSweep().Sweep
	if line := settingsLine(o); !strings.Contains(line, "--sweep 250,50/100ms") || strings.Contains(line, "--rate") {
		t.Errorf("a sweep's settings line %q: want --sweep 250,50/100ms and no --rate", line)
	}
	if got := settingsText(o); strings.Contains(got, "planned") {
		t.Errorf("a sweep's settings %q: want no clicks planned (they differ at each rate)", got)
	}
}

// The machine line names the CPU, or says it is unknown.
func TestMachineLine(t *testing.T) {
	o := &scenario.Outcome{Env: scenario.Env{NumCPU: 2, GOOS: "linux", GOARCH: "amd64", GoVersion: "go1.26"},
		Backend: "test", Targets: []string{"http://a", "http://b"}, Wall: 1500 * time.Millisecond}
	want := "Machine: 2 CPUs (unknown CPU), linux/amd64, go1.26. Backend: test. Shops: http://a, http://b. Run took 1.5s."
	if got := machineLine(o); got != want {
		t.Errorf("machineLine:\n got %q\nwant %q", got, want)
	}
}

// A command line is cut before each flag, so that the page breaks a long
// one between flags.
func TestFlagPieces(t *testing.T) {
	got := flagPieces("loadgen --strategies off,lua --users 660 --stall-rate 0.08 (1327 clicks planned)")
	want := []string{"loadgen", "--strategies off,lua", "--users 660", "--stall-rate 0.08 (1327 clicks planned)"}
	if !slices.Equal(got, want) {
		t.Errorf("flagPieces: got %q, want %q", got, want)
	}
}
