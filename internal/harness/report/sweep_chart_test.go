package report

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// chartDoc is a sweep of one row, lua, at 250, 500 and 1,000 clicks/s
// offered, run out of order: it keeps up (orders/s = offered) until 500/s
// and sells 600/s at 1,000/s, where its p99 passes kneeMs.
func chartDoc() *SweepDoc {
	return &SweepDoc{OfferedPerSecond: []float64{1000, 250, 500}, Rows: []SweepRowDoc{{Strategy: "lua", Points: []SweepPointDoc{
		{OfferedPerSecond: 1000, OrdersPerSecond: 600, AnsweredPerSecond: 800, P99Ms: 1000},
		{OfferedPerSecond: 250, OrdersPerSecond: 250, AnsweredPerSecond: 250, P99Ms: 10},
		{OfferedPerSecond: 500, OrdersPerSecond: 500, AnsweredPerSecond: 500, P99Ms: 100},
	}}}}
}

// A row's points are drawn in the order of their rate, its knee among them.
func TestPoints(t *testing.T) {
	ps, k := points(chartDoc().Rows[0])
	var rates []float64
	for _, p := range ps {
		rates = append(rates, p.OfferedPerSecond)
	}
	if !slices.Equal(rates, []float64{250, 500, 1000}) || k != 2 {
		t.Errorf("points: got rates %v, knee at %d; want [250 500 1000], 2", rates, k)
	}
	if _, k := points(SweepRowDoc{Points: pts(250, 4, 500, 9)}); k != -1 {
		t.Errorf("points of a row without a knee: knee at %d, want -1", k)
	}
}

var (
	dotOf   = regexp.MustCompile(`<circle class="mark" cx="([\d.]+)" cy="([\d.]+)"[^>]*><title>([^<]*)</title>`)
	ringOf  = regexp.MustCompile(`<circle class="knee" cx="([\d.]+)" cy="([\d.]+)"`)
	guideOf = regexp.MustCompile(`<line x1="([\d.]+)" x2="([\d.]+)" y1="([\d.]+)" y2="([\d.]+)" class="guide">`)
)

// floats parses a regexp's groups 1..n.
func floats(t *testing.T, m []string) []float64 {
	t.Helper()
	var out []float64
	for _, s := range m[1:] {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// dots are a chart's data dots by their title.
func dots(t *testing.T, svg string) map[string][2]float64 {
	out := map[string][2]float64{}
	for _, m := range dotOf.FindAllStringSubmatch(svg, -1) {
		v := floats(t, m)
		out[m[3]] = [2]float64{v[0], v[1]}
	}
	return out
}

// On the goodput chart a row that keeps up lies on the y = x guide, one
// that does not falls under it, and the knee's ring sits on its dot.
func TestGoodputChart(t *testing.T) {
	svg := goodputChart(chartDoc())
	g := guideOf.FindStringSubmatch(svg)
	if g == nil {
		t.Fatalf("no y = x guide:\n%s", svg)
	}
	gv := floats(t, g) // x1 x2 y1 y2
	onGuide := func(x float64) float64 { return gv[2] + (x-gv[0])/(gv[1]-gv[0])*(gv[3]-gv[2]) }
	if slope := (gv[2] - gv[3]) / (gv[1] - gv[0]); math.Abs(slope-sweepSlope()) > 0.01 {
		t.Errorf("guide: slope %.3f px per px, want %.3f (a click/s up for each click/s right)", slope, sweepSlope())
	}
	ds := dots(t, svg)
	for _, tc := range []struct {
		title string
		on    bool
	}{
		{"lua at 250/s offered: 250 orders/s", true},
		{"lua at 500/s offered: 500 orders/s", true},
		{"lua at 500/s offered: 500 answered/s", true},
		{"lua at 1000/s offered: 600 orders/s", false},
		{"lua at 1000/s offered: 800 answered/s", false},
	} {
		d, ok := ds[tc.title]
		if !ok {
			t.Errorf("no dot titled %q", tc.title)
			continue
		}
		if on := math.Abs(d[1]-onGuide(d[0])) < 0.2; on != tc.on {
			t.Errorf("%q at %v: on the guide %v, want %v", tc.title, d, on, tc.on)
		}
		if !tc.on && d[1] <= onGuide(d[0]) {
			t.Errorf("%q at %v: above the guide, want under it", tc.title, d)
		}
	}
	orders, answered := ds["lua at 1000/s offered: 600 orders/s"], ds["lua at 1000/s offered: 800 answered/s"]
	if answered[1] >= orders[1] {
		t.Errorf("800 answered/s drawn at y %.1f, not above 600 orders/s at %.1f", answered[1], orders[1])
	}
	rings := ringOf.FindAllStringSubmatch(svg, -1)
	if len(rings) != 1 || [2]float64(floats(t, rings[0])) != orders {
		t.Errorf("knee rings %q, want one, on the 1000/s orders dot %v", rings, orders)
	}
}

// sweepSlope is how many pixels up one click/s of goodput goes for one
// click/s offered to the right, on chartDoc's goodput chart: its axis
// tops at 1,000 both ways, the x axis with 4% to spare.
func sweepSlope() float64 {
	p := newSweepPlot(chartDoc())
	return p.h / 1000 / (p.w / p.xMax)
}

// On the p99 chart, a log scale: 10 ms, 100 ms and 1 s are equally far
// apart, 100 ms is on the knee's guide, and the knee's ring is at 1 s.
func TestP99Chart(t *testing.T) {
	svg := p99Chart(chartDoc())
	ds := dots(t, svg)
	y10, y100, y1000 := ds["lua at 250/s offered: p99 10.0ms"][1], ds["lua at 500/s offered: p99 100ms"][1], ds["lua at 1000/s offered: p99 1.00s"][1]
	if y10 == 0 || y100 == 0 || y1000 == 0 {
		t.Fatalf("dots %v: want one at 10 ms, 100 ms and 1 s", ds)
	}
	if math.Abs((y10-y100)-(y100-y1000)) > 0.2 || y1000 >= y100 {
		t.Errorf("p99 at 10 ms, 100 ms, 1 s drawn at y %.1f, %.1f, %.1f: want equal steps up", y10, y100, y1000)
	}
	g := guideOf.FindStringSubmatch(svg)
	if g == nil || math.Abs(floats(t, g)[2]-y100) > 0.2 {
		t.Errorf("the %d ms guide %q: want it at y %.1f", kneeMs, g, y100)
	}
	rings := ringOf.FindAllStringSubmatch(svg, -1)
	if len(rings) != 1 || math.Abs(floats(t, rings[0])[1]-y1000) > 0.1 {
		t.Errorf("knee rings %q: want one, at 1 s", rings)
	}
}

var tickOf = regexp.MustCompile(`class="tick" text-anchor="middle">(\d+)/s</text>`)

// Every offered rate gets a tick on the x axis, and a label unless it
// would run into the one before it.
func TestSweepXAxis(t *testing.T) {
	d := &SweepDoc{OfferedPerSecond: []float64{250, 500, 1000, 2000, 16000}}
	svg := p99Chart(d)
	var labels []string
	for _, m := range tickOf.FindAllStringSubmatch(svg, -1) {
		labels = append(labels, m[1])
	}
	// 16,000/s at the right: 250, 500 and 1,000 are 20 px apart.
	if want := []string{"250", "2000", "16000"}; !slices.Equal(labels, want) {
		t.Errorf("x labels: got %v, want %v", labels, want)
	}
	p := newSweepPlot(d)
	if got, want := p.x(16000), p.left+p.w/1.04; math.Abs(got-want) > 0.01 {
		t.Errorf("x(16000) = %.2f, want %.2f (the highest rate, 4%% from the right for its ring)", got, want)
	}
	if got := p.x(0); got != p.left {
		t.Errorf("x(0) = %.2f, want the axis's left %.2f", got, p.left)
	}
}
