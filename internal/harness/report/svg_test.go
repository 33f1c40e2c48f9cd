package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// An axis ticks at 1, 2, 2.5 or 5 times a power of ten, about four
// times, and ends at the first tick at or above the top value.
func TestNiceScale(t *testing.T) {
	for _, tc := range []struct {
		v, top, step float64
	}{
		{0, 1, 0.25},
		{-3, 1, 0.25},
		{0.3, 0.3, 0.1},
		{1, 1, 1},
		{3, 3, 1},
		{4, 4, 1},
		{7, 8, 2},
		{10, 10, 2.5},
		{99, 100, 25},
		{100, 100, 25},
		{101, 150, 50},
		{274, 300, 100},
		{1673, 2000, 500},
		{12_000, 15_000, 5000},
		{10_000, 10_000, 2500},
	} {
		top, step := niceScale(tc.v)
		if math.Abs(top-tc.top) > 1e-9 || step != tc.step {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", tc.v, top, step, tc.top, tc.step)
		}
		if tc.v > 0 && (top < tc.v || top-step >= tc.v-1e-9) {
			t.Errorf("niceScale(%v): top %v is not the first tick at or above it", tc.v, top)
		}
	}
}

// A chart's value is whole where it is whole or large, else to a tenth.
func TestNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {3, "3"}, {0.25, "0.2"}, {18.94, "18.9"}, {99.5, "99.5"}, {100.4, "100"}, {1673.6, "1674"},
	} {
		if got := num(tc.v); got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

var barOf = regexp.MustCompile(`<rect class="mark" x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"[^>]*><title>([^<]*)</title>`)

// A bar's height is its value to the axis's scale, from the axis's 0; its
// label stands across when it fits the bar and upright when it does not.
func TestBarChart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cats    []string
		values  []float64
		top     float64 // the axis's top, for the heights
		upright bool
	}{
		{"three rows, labels fit", []string{"off", "lua", "sql-atomic"}, []float64{300, 150, 0}, 300, false},
		// 20 rows: bars 19.6 px wide, "1673" 25.6 px; 2000 needs room above.
		{"twenty rows of long figures", strings.Fields("a b c d e f g h i j k l m n o p q r s t"),
			[]float64{1673, 1504, 4.5, 0.4, 6, 7, 8, 9, 10, 2000, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 3000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svg := barChart("T", "ms", tc.cats, []series{{name: "p99", color: "#000", values: tc.values}})
			bars := barOf.FindAllStringSubmatch(svg, -1)
			if len(bars) != len(tc.values) {
				t.Fatalf("got %d bars, want %d", len(bars), len(tc.values))
			}
			plotH := float64(chartH - padT - padB)
			for i, b := range bars {
				y, _ := strconv.ParseFloat(b[1], 64)
				h, _ := strconv.ParseFloat(b[2], 64)
				if want := tc.values[i] / tc.top * plotH; h < want-0.1 || h > want+0.1 {
					t.Errorf("bar %s: %.1f px high, want %.1f (its value %v of %v)", b[3], h, want, tc.values[i], tc.top)
				}
				if bottom := y + h; bottom < padT+plotH-0.1 || bottom > padT+plotH+0.1 {
					t.Errorf("bar %s ends at %.1f, want the axis's 0 at %.1f", b[3], bottom, padT+plotH)
				}
				if want := tc.cats[i] + " p99: " + num(tc.values[i]); b[3] != want {
					t.Errorf("bar title %q, want %q", b[3], want)
				}
			}
			if got := strings.Count(svg, `class="val" transform="rotate(-90`); (got > 0) != tc.upright {
				t.Errorf("upright labels: got %d, want upright %v", got, tc.upright)
			}
		})
	}
}

// Upright labels get room above the tallest bar.
func TestValueLabels(t *testing.T) {
	plotH := 210.0
	for _, tc := range []struct {
		name    string
		values  []float64
		barW    float64
		top     float64
		upright bool
	}{
		{"labels fit: the plain scale", []float64{250, 18.9}, 40, 300, false},
		{"upright, with room under the plain top", []float64{1504, 0.4}, 13, 2000, true},
		{"upright, and a tallest bar at the plain top", []float64{2000, 4.5}, 13, 3000, true},
	} {
		top, _, upright := valueLabels([]series{{values: tc.values}}, tc.barW, plotH)
		if top != tc.top || upright != tc.upright {
			t.Errorf("%s: got top %v, upright %v; want %v, %v", tc.name, top, upright, tc.top, tc.upright)
		}
		most := 0.0
		for _, v := range tc.values {
			most = max(most, v)
		}
		if room := (top - most) / top * plotH; upright && room < 4*valCharW+4 {
			t.Errorf("%s: %.1f px above the tallest bar, want room for its label", tc.name, room)
		}
	}
}

// A row's name under its bars breaks in two where it would run into its
// neighbour's: after a '-', before a '+'.
func TestCatLabel(t *testing.T) {
	for _, tc := range []struct {
		cat   string
		width float64
		want  []string
	}{
		{"sql-atomic", 200, []string{"sql-atomic"}},
		{"sql-atomic", 50, []string{"sql-", "atomic"}},
		{"fenced+batch", 50, []string{"fenced", "+batch"}},
		{"redlock", 30, []string{"redlock"}},
		{"a<b", 30, []string{"a&lt;b"}},
	} {
		var b strings.Builder
		catLabel(&b, 100, 260, tc.cat, tc.width)
		got := regexp.MustCompile(`>([^<>]+)</t`).FindAllStringSubmatch(b.String(), -1)
		var parts []string
		for _, g := range got {
			parts = append(parts, g[1])
		}
		if strings.Join(parts, "|") != strings.Join(tc.want, "|") {
			t.Errorf("catLabel(%q, %v px): got %q, want %q", tc.cat, tc.width, parts, tc.want)
		}
	}
}
