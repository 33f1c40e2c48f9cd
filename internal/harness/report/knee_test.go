package report

import (
	"strings"
	"testing"
)

// pts are a row's points: an offered rate and its p99 in ms, in pairs.
func pts(rateP99 ...float64) []SweepPointDoc {
	var out []SweepPointDoc
	for i := 0; i+1 < len(rateP99); i += 2 {
		out = append(out, SweepPointDoc{OfferedPerSecond: rateP99[i], P99Ms: rateP99[i+1]})
	}
	return out
}

// A row's knee is the lowest offered rate at which its p99 passed kneeMs,
// in whatever order the rates ran.
func TestKnee(t *testing.T) {
	for _, tc := range []struct {
		name   string
		points []SweepPointDoc
		ok     bool
		rate   float64
	}{
		{"p99 never passed", pts(250, 4, 500, 9, 1000, 60), false, 0},
		{"exactly kneeMs has not passed it", pts(250, 4, 500, 100), false, 0},
		{"just past kneeMs", pts(250, 4, 500, 100.1), true, 500},
		{"the first rate past it", pts(250, 4, 500, 30, 1000, 300, 2000, 900), true, 1000},
		{"rates run out of order", pts(2000, 900, 250, 4, 1000, 300, 500, 30), true, 1000},
		{"p99 fell back under it at a higher rate", pts(250, 4, 500, 150, 1000, 60), true, 500},
		{"past it from the lowest rate", pts(250, 800, 500, 900), true, 250},
		{"no points", nil, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := knee(SweepRowDoc{Strategy: "lua", Points: tc.points})
			if ok != tc.ok || p.OfferedPerSecond != tc.rate {
				t.Errorf("knee: got %v at %v/s, want %v at %v/s", ok, p.OfferedPerSecond, tc.ok, tc.rate)
			}
		})
	}
}

// The knee line says where the knee is and with what p99, or up to which
// rate there was none.
func TestKneeLine(t *testing.T) {
	for _, tc := range []struct {
		points []SweepPointDoc
		want   string
	}{
		{pts(500, 30, 1000, 412.4, 2000, 900), "p99 passed 100ms at 1000/s offered (412 ms)"},
		{pts(2000, 60, 250, 4, 1000, 9), "p99 stayed under 100ms up to 2000/s offered"},
		{pts(333.4, 101), "p99 passed 100ms at 333/s offered (101 ms)"},
		{nil, "no points"},
	} {
		if got := kneeLine(SweepRowDoc{Strategy: "lua", Points: tc.points}); got != tc.want {
			t.Errorf("kneeLine(%v):\n got %q\nwant %q", tc.points, got, tc.want)
		}
	}
}

// Each row's line stands after its strategy, the lines starting in one column
// whatever the strategies' lengths.
func TestRowLines(t *testing.T) {
	d := &SweepDoc{Rows: []SweepRowDoc{
		{Strategy: "lua", Points: pts(500, 30, 1000, 412)},
		{Strategy: "fenced+batch", Points: pts(500, 9, 1000, 60)},
	}}
	got := rowLines(d, kneeLine)
	want := []string{
		"lua:          p99 passed 100ms at 1000/s offered (412 ms)",
		"fenced+batch: p99 stayed under 100ms up to 1000/s offered",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rowLines:\n got %q\nwant %q", got, want)
	}
}
