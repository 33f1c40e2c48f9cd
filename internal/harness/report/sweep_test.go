package report

import (
	"slices"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/netsim"
)

// rate is n requests every per.
func rate(n int, per time.Duration) vegeta.Rate { return vegeta.Rate{Freq: n, Per: per} }

// countedSweep is a sweep of lua and sql-atomic at 250/s and 50/100ms
// (500/s), each point's figures set by hand (counted).
func countedSweep() *scenario.Outcome {
	o := &scenario.Outcome{Settings: scenario.DefaultSettings()}
	o.Sweep = []scenario.SweepPoint{
		{Rate: rate(250, time.Second), Strategies: []*scenario.StrategyResult{
			counted("lua", 2*time.Second, 500, 480, 0, map[string]int{"503 busy": 20}, 4*time.Millisecond, 40*time.Millisecond),
			counted("sql-atomic", 2*time.Second, 500, 500, 0, nil, 2*time.Millisecond, 6*time.Millisecond),
		}},
		{Rate: rate(50, 100*time.Millisecond), Strategies: []*scenario.StrategyResult{
			counted("lua", 4*time.Second, 1000, 400, 0, map[string]int{"503 busy": 500, "0 timeout": 100}, 900*time.Millisecond, 2500*time.Millisecond),
			counted("sql-atomic", 2*time.Second, 1000, 990, 0, map[string]int{"503 unavailable": 10}, 3*time.Millisecond, 9*time.Millisecond),
		}},
	}
	o.Sweep[1].Strategies[1].Audit.Oversold = 2
	o.Sweep[0].Strategies[0].Machine, o.Sweep[1].Strategies[0].Machine = 0.5, 0.95
	o.Sweep[0].Strategies[1].Machine, o.Sweep[1].Strategies[1].Machine = 0.4, -1
	return o
}

// The sweep's points, per row in rate order: what was offered, what
// came back per second, and how fast.
func TestNewSweepDoc(t *testing.T) {
	d := newSweepDoc(countedSweep())
	if got, want := d.Rates, []string{"250", "50/100ms"}; !slices.Equal(got, want) {
		t.Errorf("rates: got %v, want %v", got, want)
	}
	if got, want := d.OfferedPerSecond, []float64{250, 500}; !slices.Equal(got, want) {
		t.Errorf("offered: got %v, want %v", got, want)
	}
	if len(d.Rows) != 2 || d.Rows[0].Strategy != "lua" || d.Rows[1].Strategy != "sql-atomic" {
		t.Fatalf("rows: got %+v, want lua then sql-atomic", d.Rows)
	}
	for _, tc := range []struct {
		row, point int
		want       SweepPointDoc
	}{
		{0, 0, SweepPointDoc{OfferedPerSecond: 250, ReqPerSecond: 250, OrdersPerSecond: 240, AnsweredPerSecond: 240,
			Requests: 500, Errors: 20, P50Ms: 4, P99Ms: 40, MachineCPU: 0.5}},
		{0, 1, SweepPointDoc{OfferedPerSecond: 500, ReqPerSecond: 250, OrdersPerSecond: 100, AnsweredPerSecond: 100,
			Requests: 1000, Errors: 600, P50Ms: 900, P99Ms: 2500, MachineCPU: 0.95}},
		{1, 0, SweepPointDoc{OfferedPerSecond: 250, ReqPerSecond: 250, OrdersPerSecond: 250, AnsweredPerSecond: 250,
			Requests: 500, P50Ms: 2, P99Ms: 6, MachineCPU: 0.4}},
		{1, 1, SweepPointDoc{OfferedPerSecond: 500, ReqPerSecond: 500, OrdersPerSecond: 495, AnsweredPerSecond: 495,
			Requests: 1000, Errors: 10, Oversold: 2, P50Ms: 3, P99Ms: 9, MachineCPU: -1}},
	} {
		if got := d.Rows[tc.row].Points[tc.point]; got != tc.want {
			t.Errorf("%s at %v/s:\n got %+v\nwant %+v", d.Rows[tc.row].Strategy, tc.want.OfferedPerSecond, got, tc.want)
		}
	}
	if newSweepDoc(&scenario.Outcome{}) != nil {
		t.Errorf("a run at one rate: got a sweep section, want none")
	}
}

// The table writes each point's figures whole, latencies as Millis, and
// "-" for the p99 of nothing shed.
func TestSweepRows(t *testing.T) {
	o := countedSweep()
	want := [][]string{
		{"lua", "250/s", "250", "240", "240", "20", "0", "4.0ms", "40.0ms", "0", "-", "50%"},
		{"lua", "500/s", "250", "100", "100", "600", "0", "900ms", "2.50s", "0", "-", "95%"},
		{"sql-atomic", "250/s", "250", "250", "250", "0", "0", "2.0ms", "6.0ms", "0", "-", "40%"},
		{"sql-atomic", "500/s", "500", "495", "495", "10", "2", "3.0ms", "9.0ms", "0", "-", "?"},
	}
	got := SweepRows(o)
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("sweep rows:\n got %q\nwant %q", got, want)
	}
	for _, row := range got {
		if len(row) != len(SweepColumns) {
			t.Errorf("row %q: %d cells, want one per column (%d)", row, len(row), len(SweepColumns))
		}
	}
	// Only sql-atomic's oversold cell at 500/s is red.
	var red []string
	for i, row := range sweepCells(o) {
		for j, c := range row {
			if c.Wrong != "" {
				red = append(red, got[i][0]+"@"+got[i][1]+"/"+SweepColumns[j]+": "+c.Wrong)
			}
		}
	}
	if want := []string{"sql-atomic@500/s/oversold: sold 2 more units than the stock"}; !slices.Equal(red, want) {
		t.Errorf("red cells: got %q, want %q", red, want)
	}
}

// A rate is named as it was given, and a sweep's rates as a list.
func TestSweepRates(t *testing.T) {
	for _, tc := range []struct {
		rates []vegeta.Rate
		want  string
	}{
		{[]vegeta.Rate{rate(250, time.Second)}, "250 clicks/s offered"},
		{[]vegeta.Rate{rate(250, time.Second), rate(500, 0)}, "250 and 500 clicks/s offered"},
		{[]vegeta.Rate{rate(250, time.Second), rate(50, 100*time.Millisecond), rate(1000, time.Second)},
			"250, 50/100ms and 1000 clicks/s offered"},
	} {
		o := &scenario.Outcome{}
		for _, r := range tc.rates {
			o.Sweep = append(o.Sweep, scenario.SweepPoint{Rate: r})
		}
		if got := sweepRates(o); got != tc.want {
			t.Errorf("sweepRates: got %q, want %q", got, tc.want)
		}
	}
}

// A sweep's text and Markdown carry its table, then every row's knee
// line, then every row's held line; the text a blank line between rows.
func TestSweepTextAndMarkdown(t *testing.T) {
	o := countedSweep()
	var text strings.Builder
	writeSweepText(&text, o, func(s string) string { return s })
	lines := strings.Split(text.String(), "\n")
	for i, want := range map[int]string{
		0:  "strategy    offered  req/s  orders/s  answered/s  errors  oversold    p50     p99  shed  shed p99  cpu",
		1:  "lua           250/s    250       240         240      20         0  4.0ms  40.0ms     0         -  50%",
		3:  "",
		4:  "sql-atomic    250/s    250       250         250       0         0  2.0ms   6.0ms     0         -  40%",
		7:  "lua:          p99 passed 100ms at 500/s offered (2500 ms)",
		8:  "sql-atomic:   p99 stayed under 100ms up to 500/s offered",
		10: "lua:          peak 240 orders/s at 250/s offered; 500/s: 0.42× the peak",
		11: "sql-atomic:   peak 495 orders/s at 500/s offered",
		13: "lua:          ceiling -: no network (rtt 0)",
	} {
		if i >= len(lines) || lines[i] != want {
			t.Errorf("text line %d:\n got %q\nwant %q\nin:\n%s", i, lines[min(i, len(lines)-1)], want, text.String())
		}
	}
	var md strings.Builder
	if err := writeMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Double 11 (双11) flash sale: a sweep, 250 and 50/100ms clicks/s offered\n",
		"| strategy | offered | req/s |",
		"|---|---:|---:|",
		"| sql-atomic | 500/s | 500 | 495 | 495 | 10 | 2 | 3.0ms | 9.0ms | 0 | - | ? |\n",
		"- lua:          p99 passed 100ms at 500/s offered (2500 ms)\n- sql-atomic:",
		"Settings at each rate: `--strategies",
		"--sweep 250,50/100ms",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
}

// At an RTT each row's ceiling line sets its peak beside the ceiling its
// hold allows, and says from the points what held a peak below 0.8× of it.
func TestSweepCeilingLines(t *testing.T) {
	o := countedSweep()
	rtt, err := netsim.ParseRTT("2ms")
	if err != nil {
		t.Fatal(err)
	}
	o.Settings.RTT, o.Backend = rtt, "embedded SQLite"
	o.Settings.Strategies = append(o.Settings.Strategies, "redis-decr")
	o.Sweep[0].Strategies = append(o.Sweep[0].Strategies, counted("redis-decr", time.Second, 250, 250, 0, nil, time.Millisecond, 2*time.Millisecond))
	d := newSweepDoc(o)
	for i, want := range []string{
		// 1 redis + 6 db trips at 2ms and 2ms of work: 16ms a sale.
		"ceiling 62/s (1 redis + 6 db trips + work), peak 240/s: 3.84×",
		// SQLite's write lock, taken at BEGIN, for 3 trips: 6ms a sale.
		"ceiling 167/s (3 db trips), peak 495/s: 2.97×",
		"ceiling -: no network ceiling: its hot key is taken by one Redis script, held for Redis's own time only",
	} {
		if got := ceilingLine(d.Rows[i]); got != want {
			t.Errorf("%s: got %q\nwant %q", d.Rows[i].Strategy, got, want)
		}
	}
	o.Backend = "MySQL"
	d = newSweepDoc(o)
	d.Rows[1].Points[1].OrdersPerSecond = 300
	want := "ceiling 500/s (1 db trips), peak 300/s: 0.60×; limited by errors (10 at 500/s)"
	if got := ceilingLine(d.Rows[1]); got != want {
		t.Errorf("sql-atomic on MySQL:\n got %q\nwant %q", got, want)
	}
	d.Rows[0].Points[0].OrdersPerSecond, d.Rows[0].Points[1].OrdersPerSecond = 40, 30
	if got := ceilingLine(d.Rows[0]); !strings.Contains(got, "the cores (95% busy at 500/s)") {
		t.Errorf("lua at 95%% CPU: got %q, want it to name the cores", got)
	}
}
