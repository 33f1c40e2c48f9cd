package report

import (
	"slices"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A threshold holds or fails by its operator, at the boundary too.
func TestThresholdHolds(t *testing.T) {
	for _, tc := range []struct {
		expr string
		v    float64
		want bool
	}{
		{"p99<200ms", 199.9, true}, {"p99<200ms", 200, false},
		{"p99<=200ms", 200, true}, {"p99<=200ms", 200.1, false},
		{"orders>99", 100, true}, {"orders>99", 99, false},
		{"orders>=100", 100, true}, {"orders>=100", 99, false},
		{"oversold==0", 0, true}, {"oversold==0", 1, false},
		{"oversold!=0", 1, true}, {"oversold!=0", 0, false},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Fatalf("ParseThreshold(%q): %v", tc.expr, err)
		}
		if got := th.holds(tc.v); got != tc.want {
			t.Errorf("%s with %v: got %v, want %v", tc.expr, tc.v, got, tc.want)
		}
	}
}

// A percentage threshold reads the figure as a share of the row's
// requests, and says so when it fails.
func TestThresholdPercent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m        *scenario.StrategyResult
		expr     string
		value    float64
		rendered string
	}{
		{"errors of all requests", counted("lua", time.Second, 400, 0, 0, map[string]int{"503 busy": 6, "0 timeout": 1}, 0, 0),
			"errors<1%", 1.75, "1.75%"},
		{"only 503s", counted("lua", time.Second, 400, 0, 0, map[string]int{"503 busy": 6, "0 timeout": 1}, 0, 0),
			"503s<1%", 1.5, "1.50%"},
		{"no requests: no share", counted("lua", 0, 0, 0, 0, nil, 0, 0), "errors<1%", 0, "0.00%"},
		{"a latency in ms", counted("lua", time.Second, 1, 0, 0, nil, 0, 412*time.Millisecond), "p99<200ms", 412, "412ms"},
		{"a count", counted("lua", time.Second, 1, 1, 0, nil, 0, 0), "201<2", 1, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th, err := ParseThreshold(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			v := th.value(tc.m)
			if v != tc.value {
				t.Errorf("value: got %v, want %v", v, tc.value)
			}
			if got := th.render(v); got != tc.rendered {
				t.Errorf("render: got %q, want %q", got, tc.rendered)
			}
		})
	}
}

// With --count a row passes only if every run does, and the failure names
// the first run that did not; a sweep's failure names the offered rate.
func TestCheckNamesTheRunAndTheRate(t *testing.T) {
	ts, err := ParseThresholds([]string{"p99<100ms", "oversold==0"})
	if err != nil {
		t.Fatal(err)
	}
	o := &scenario.Outcome{}
	row := counted("lua", time.Second, 10, 1, 0, nil, 0, 50*time.Millisecond)
	for _, p99 := range []time.Duration{50, 150, 300} {
		row.Runs = append(row.Runs, counted("lua", time.Second, 10, 1, 0, nil, 0, p99*time.Millisecond))
	}
	o.Strategies = []*scenario.StrategyResult{row}
	got := Check(o, ts)
	want := []Failure{{Strategy: "lua", Threshold: "p99<100ms", Got: "150ms", Run: 2, Runs: 3}}
	if !slices.Equal(got, want) {
		t.Errorf("Check of a --count row:\n got %+v\nwant %+v", got, want)
	}
	if got, want := got[0].String(), "lua: p99<100ms failed: it was 150ms (run 2 of 3)"; got != want {
		t.Errorf("Failure.String: got %q, want %q", got, want)
	}

	got = Check(countedSweep(), ts)
	want = []Failure{
		{Strategy: "lua at 50/100ms", Threshold: "p99<100ms", Got: "2.50s", Runs: 1},
		{Strategy: "sql-atomic at 50/100ms", Threshold: "oversold==0", Got: "2", Runs: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Check of a sweep:\n got %+v\nwant %+v", got, want)
	}
	if got, want := want[1].String(), "sql-atomic at 50/100ms: oversold==0 failed: it was 2"; got != want {
		t.Errorf("Failure.String: got %q, want %q", got, want)
	}
}
