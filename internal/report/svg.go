package report

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/scenario"
)

// The charts are plain SVG drawn here, so report.html needs no script and
// no network to show them.

// series is one set of bars, one value per category.
type series struct {
	name   string
	color  string
	values []float64
}

const (
	chartW, chartH         = 640, 280
	padL, padR, padT, padB = 64, 16, 34, 36
)

// barChart draws grouped bars: one group per category, one bar per series,
// each labelled with its value.
func barChart(title, unit string, cats []string, ss []series) string {
	top := 0.0
	for _, s := range ss {
		for _, v := range s.values {
			top = max(top, v)
		}
	}
	top = niceCeil(top)
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	y := func(v float64) float64 { return padT + plotH - v/top*plotH }

	var b strings.Builder
	svgOpen(&b, title)
	for i := 0; i <= 4; i++ {
		v := top * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/>`, padL, chartW-padR, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="tick" text-anchor="end">%s</text>`, padL-6, y(v)+4, num(v))
	}
	fmt.Fprintf(&b, `<text x="14" y="%d" class="tick" transform="rotate(-90 14 %d)" text-anchor="middle">%s</text>`,
		padT+int(plotH/2), padT+int(plotH/2), html.EscapeString(unit))
	groupW := plotW / float64(max(len(cats), 1))
	barW := groupW * 0.7 / float64(max(len(ss), 1))
	for c, cat := range cats {
		x0 := padL + groupW*float64(c) + groupW*0.15
		for si, s := range ss {
			v := s.values[c]
			x := x0 + barW*float64(si)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`,
				x, y(v), barW-2, padT+plotH-y(v), s.color, html.EscapeString(cat), html.EscapeString(s.name), num(v))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="val" text-anchor="middle">%s</text>`, x+barW/2-1, y(v)-3, num(v))
		}
		catLabel(&b, x0+groupW*0.35, chartH-padB+18, cat, groupW)
	}
	legend(&b, ss)
	b.WriteString(`</svg>`)
	return b.String()
}

// catLabel writes a category's name under its bars at x, y: on one line if
// it fits the group's width, otherwise broken in two after a '-' or before
// a '+' ("sql-" "atomic", "fenced" "+batch"), so that with many rows the
// names of neighbours do not run into each other.
func catLabel(b *strings.Builder, x float64, y int, cat string, width float64) {
	const charW = 6.5 // the class "cat" font, an average character
	cut := -1
	if float64(len(cat))*charW > width {
		if i := strings.LastIndex(cat, "+"); i > 0 {
			cut = i
		} else if i := strings.LastIndex(cat, "-"); i > 0 {
			cut = i + 1
		}
	}
	if cut < 0 {
		fmt.Fprintf(b, `<text x="%.1f" y="%d" class="cat" text-anchor="middle">%s</text>`, x, y, html.EscapeString(cat))
		return
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" class="cat" text-anchor="middle"><tspan x="%.1f">%s</tspan><tspan x="%.1f" dy="12">%s</tspan></text>`,
		x, y, x, html.EscapeString(cat[:cut]), x, html.EscapeString(cat[cut:]))
}

// Colours of the kinds of answer in the latency scatter.
var kindColor = map[string]string{
	scenario.KindCreated:   "#2e7d32",
	scenario.KindQueued:    "#66bb6a",
	scenario.KindSoldOut:   "#9e9e9e",
	scenario.KindDuplicate: "#1565c0",
	scenario.KindError:     "#e65100",
}

// maxPoints bounds the dots of one scatter; beyond it every k-th result is
// drawn, so the page stays light.
const maxPoints = 6000

// latencyScatter draws one attack's latency over time: a dot per request
// at (when it was sent, how long it took), on a log scale, coloured by the
// kind of answer, with a line where --redlock-kill, --redis-restart or
// --crash struck.
func latencyScatter(m *scenario.ModeResult) string {
	rs := m.Results
	var b strings.Builder
	svgOpen(&b, fmt.Sprintf("%s: latency of each request over time", m.Mode))
	if len(rs) == 0 {
		b.WriteString(`<text x="320" y="140" class="tick" text-anchor="middle">no requests</text></svg>`)
		return b.String()
	}
	begin, span, lo, hi := rs[0].Timestamp, 0.0, math.Inf(1), 0.0
	for _, r := range rs {
		if r.Timestamp.Before(begin) {
			begin = r.Timestamp
		}
	}
	for _, r := range rs {
		span = max(span, r.Timestamp.Sub(begin).Seconds())
		l := max(ms(r.Latency), 0.1)
		lo, hi = min(lo, l), max(hi, l)
	}
	span = max(span, 0.001)
	lo, hi = math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if hi <= lo {
		hi = lo + 1
	}
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	x := func(s float64) float64 { return padL + s/span*plotW }
	y := func(l float64) float64 { return padT + plotH - (math.Log10(max(l, 0.1))-lo)/(hi-lo)*plotH }

	for e := lo; e <= hi; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/>`, padL, chartW-padR, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="tick" text-anchor="end">%s</text>`, padL-6, y(v)+4, Millis(time.Duration(v*float64(time.Millisecond))))
	}
	for i := 0; i <= 4; i++ {
		s := span * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick" text-anchor="middle">%.1fs</text>`, x(s), chartH-padB+16, s)
	}
	step := max(len(rs)/maxPoints, 1)
	for i := 0; i < len(rs); i += step {
		r := &rs[i]
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.6" fill="%s"/>`,
			x(r.Timestamp.Sub(begin).Seconds()), y(ms(r.Latency)), kindColor[scenario.Classify(r)])
	}
	if k := m.Kill; k != nil {
		kx := x(k.At.Seconds())
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" class="kill"/>`, kx, kx, padT, padT+plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="kill-label">%d node(s) down</text>`, kx+4, padT+12, len(k.Nodes))
	}
	if r := m.Restart; r != nil && r.Restarted {
		rx := x(r.At.Seconds())
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" class="kill"/>`, rx, rx, padT, padT+plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="kill-label">%d node(s) restarted empty</text>`, rx+4, padT+12, len(r.Nodes))
	}
	crashMarks(&b, m, x, plotH)
	legend(&b, []series{
		{name: "201", color: kindColor[scenario.KindCreated]},
		{name: "202", color: kindColor[scenario.KindQueued]},
		{name: "sold out", color: kindColor[scenario.KindSoldOut]},
		{name: "duplicate", color: kindColor[scenario.KindDuplicate]},
		{name: "error", color: kindColor[scenario.KindError]},
	})
	if step > 1 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="tick" text-anchor="end">every %dth request shown</text>`, chartW-padR, chartH-4, step)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// svgOpen starts an SVG with its title.
func svgOpen(b *strings.Builder, title string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img"><title>%s</title>`,
		chartW, chartH, chartW, chartH, html.EscapeString(title))
	fmt.Fprintf(b, `<text x="%d" y="18" class="title">%s</text>`, padL, html.EscapeString(title))
}

// legend draws coloured keys along the top right.
func legend(b *strings.Builder, ss []series) {
	x := float64(chartW - padR)
	for i := len(ss) - 1; i >= 0; i-- {
		w := float64(len(ss[i].name))*6.5 + 18
		x -= w
		fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="10" height="10" fill="%s"/><text x="%.1f" y="%d" class="tick">%s</text>`,
			x, padT-14, ss[i].color, x+13, padT-5, html.EscapeString(ss[i].name))
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 1), so
// the axis reads in round numbers.
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// num renders a chart value: integers plainly, others with one decimal.
func num(v float64) string {
	if v == math.Trunc(v) || v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
