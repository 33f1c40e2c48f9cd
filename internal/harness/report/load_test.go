package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		in      string
		name    string
		op      string
		value   float64
		percent bool
	}{
		{"p99<200ms", "p99", "<", 200, false},
		{"p95 <= 1.5s", "p95", "<=", 1500, false},
		{"p50<40", "p50", "<", 40, false},
		{"oversold==0", "oversold", "==", 0, false},
		{"errors<1%", "errors", "<", 1, true},
		{"503s<=0.5%", "503s", "<=", 0.5, true},
		{"req/s>=200", "req/s", ">=", 200, false},
		{"orders!=0", "orders", "!=", 0, false},
		{"dup_orders==0", "dup_orders", "==", 0, false},
	} {
		got, err := ParseThreshold(tc.in)
		if err != nil || got.Figure.Name != tc.name || got.Op != tc.op || got.Value != tc.value || got.Percent != tc.percent {
			t.Errorf("ParseThreshold(%q) = %+v, %v; want %s %s %v (percent %v)", tc.in, got, err, tc.name, tc.op, tc.value, tc.percent)
		}
	}
	for _, bad := range []string{"p99", "speed<1", "p99<fast", "p99<1%", "oversold==", "orders<1%"} {
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("ParseThreshold(%q): no error", bad)
		}
	}
}

func TestCheckSaysWhichRowFailed(t *testing.T) {
	o := outcome() // off oversold 1, redlock 0; each row 4 answers, one 503
	ts, err := ParseThresholds([]string{"oversold==0", "errors<30%", "p99<1s"})
	if err != nil {
		t.Fatal(err)
	}
	got := Check(o, ts)
	if len(got) != 1 || got[0].Strategy != "off" || got[0].Threshold != "oversold==0" || got[0].Got != "1" {
		t.Fatalf("Check = %+v, want one failure: off, oversold==0, 1", got)
	}
	ts, _ = ParseThresholds([]string{"errors<20%"})
	if got := Check(o, ts); len(got) != 2 || got[0].Got != "25.00%" {
		t.Errorf("errors<20%% with 1 of 4 an error: %+v, want both rows failing at 25.00%%", got)
	}
}

// countOutcome is outcome() with its redlock row run three times.
func countOutcome() *scenario.Outcome {
	o := outcome()
	row := o.Strategies[1]
	var runs []*scenario.StrategyResult
	for i, p99 := range []time.Duration{10, 30, 20} {
		r := *row
		r.Metrics = vegeta.Metrics{}
		for j := range 4 {
			res := vegeta.Result{Code: 201, Timestamp: row.Results[0].Timestamp.Add(time.Duration(j) * time.Millisecond), Latency: p99 * time.Millisecond}
			r.Metrics.Add(&res)
		}
		r.Metrics.Close()
		r.Audit.Orders = 10 + i
		runs = append(runs, &r)
	}
	row.Runs = runs
	return o
}

func TestCountShowsMedianAndSpread(t *testing.T) {
	o := countOutcome()
	rows := Rows(o)
	orders := rows[1][indexOf(Columns, "orders")]
	if orders != "11 (10–12)" {
		t.Errorf("orders cell %q, want 11 (10–12)", orders)
	}
	if p99 := rows[1][indexOf(Columns, "p99")]; p99 != "20.0ms (10.0ms–30.0ms)" {
		t.Errorf("p99 cell %q, want 20.0ms (10.0ms–30.0ms)", p99)
	}
	d := NewDocument(o)
	sp := d.Strategies[1].Spread["orders"]
	if d.Strategies[1].Runs != 3 || sp != (Spread{Median: 11, Min: 10, Max: 12}) {
		t.Errorf("report.json: runs %d, orders spread %+v; want 3 and 11 (10–12)", d.Strategies[1].Runs, sp)
	}
	if d.Strategies[0].Spread != nil || d.Strategies[0].Runs != 1 {
		t.Errorf("a row run once: runs %d, spread %v; want 1 and none", d.Strategies[0].Runs, d.Strategies[0].Spread)
	}
}

func indexOf(cols []string, name string) int {
	for i, c := range cols {
		if c == name {
			return i
		}
	}
	return -1
}

func TestReportRecordsEverySetting(t *testing.T) {
	o := outcome()
	o.Settings.Rate, o.Settings.RatePer, o.Settings.Batch, o.Settings.Count = 50, 100*time.Millisecond, 32, 1
	o.Flags = map[string]string{"rate": "50/100ms", "batch": "32", "lock-wait": "1s"}
	o.Thresholds = []string{"oversold==0"}
	d := NewDocument(o)
	s := d.Settings
	if s.Rate != "50/100ms" || s.OfferedPerSec != 500 || s.Batch != 32 || s.Count != 1 || s.TimeoutSeconds != 30 {
		t.Errorf("settings %+v: want rate 50/100ms, 500/s offered, batch 32, count 1, timeout 30s", s.LoadSettingsDoc)
	}
	if d.Flags["lock-wait"] != "1s" {
		t.Errorf("flags %v: want lock-wait", d.Flags)
	}
	if d.Thresholds == nil || len(d.Thresholds.Failed) != 1 || d.Thresholds.Failed[0].Strategy != "off" {
		t.Errorf("thresholds %+v: want off failing oversold==0", d.Thresholds)
	}
}

// sweepOutcome is a sweep of the outcome()'s rows at two rates, the second
// slower.
func sweepOutcome() *scenario.Outcome {
	o := outcome()
	slow := outcome()
	for _, m := range slow.Strategies {
		m.Metrics = vegeta.Metrics{}
		for j := range 4 {
			r := vegeta.Result{Code: 201, Timestamp: m.Results[0].Timestamp.Add(time.Duration(j) * time.Millisecond), Latency: 250 * time.Millisecond}
			m.Metrics.Add(&r)
		}
		m.Metrics.Close()
	}
	o.Sweep = []scenario.SweepPoint{
		{Rate: vegeta.Rate{Freq: 250, Per: time.Second}, Strategies: o.Strategies},
		{Rate: vegeta.Rate{Freq: 50, Per: 100 * time.Millisecond}, Strategies: slow.Strategies},
	}
	o.Strategies = nil
	return o
}

func TestSweepReport(t *testing.T) {
	o := sweepOutcome()
	d := NewDocument(o)
	if d.Sweep == nil || len(d.Sweep.Rows) != 2 || len(d.Sweep.Rows[0].Points) != 2 {
		t.Fatalf("sweep section %+v, want 2 rows of 2 points", d.Sweep)
	}
	if got := d.Sweep.OfferedPerSecond; got[0] != 250 || got[1] != 500 {
		t.Errorf("offered %v, want [250 500]", got)
	}
	if p := d.Sweep.Rows[1].Points[1]; p.P99Ms != 250 {
		t.Errorf("redlock at 500/s: p99 %v ms, want 250", p.P99Ms)
	}
	var text bytes.Buffer
	if err := WriteText(&text, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "redlock:      p99 passed 100ms at 500/s offered (250 ms)") {
		t.Errorf("text lacks the knee line:\n%s", text.String())
	}
	dir := t.TempDir()
	if err := Write(dir, o); err != nil {
		t.Fatalf("Write: %v", err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, HTMLFile))
	for _, title := range []string{"Goodput against the offered rate", "p99 against the offered rate"} {
		if !strings.Contains(string(page), title) {
			t.Errorf("report.html lacks the chart %q", title)
		}
	}
	// orders/s and answered/s per strategy on the goodput chart, p99 on the other.
	if got, want := strings.Count(string(page), "<polyline"), 2*2+2; got != want {
		t.Errorf("report.html: got %d lines, want %d (two per strategy for goodput, one for p99)", got, want)
	}
	var back Document
	raw, _ := os.ReadFile(filepath.Join(dir, JSONFile))
	if err := json.Unmarshal(raw, &back); err != nil || back.Sweep == nil {
		t.Errorf("report.json read back: %v, sweep %v", err, back.Sweep)
	}
}

func TestLinkLatest(t *testing.T) {
	base := t.TempDir()
	for _, name := range []string{"20261111-000000", "20261111-000100"} {
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := LinkLatest(base, dir); err != nil {
			t.Fatalf("LinkLatest(%s): %v", name, err)
		}
		if got, _ := os.Readlink(filepath.Join(base, LatestLink)); got != name {
			t.Errorf("latest -> %q, want %q", got, name)
		}
	}
}
