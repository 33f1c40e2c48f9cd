package report

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// Colours of the kinds of answer in the latency scatter.
var kindColor = map[string]string{
	tally.KindCreated:   "#2e7d32",
	tally.KindQueued:    "#66bb6a",
	tally.KindSoldOut:   "#9e9e9e",
	tally.KindDuplicate: "#1565c0",
	tally.KindError:     "#e65100",
}

// maxPoints bounds the dots of one scatter; beyond it every k-th result is
// drawn, so the page stays light.
const maxPoints = 6000

// latencyScatter draws one attack's latency over time: a dot per request
// at (when it was sent, how long it took), on a log scale, coloured by the
// kind of answer, with a line where --redlock-kill, --redis-restart or
// --crash struck. m must have results (an attack without any has nothing
// to draw; writeHTML says so instead).
func latencyScatter(m *scenario.StrategyResult) string {
	rs := m.Results
	var b strings.Builder
	svgOpen(&b, fmt.Sprintf("%s: latency of each request over time", m.Strategy))
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
		fmt.Fprintf(&b, `<circle class="mark" cx="%.1f" cy="%.1f" r="1.6" fill="%s"/>`,
			x(r.Timestamp.Sub(begin).Seconds()), y(ms(r.Latency)), kindColor[tally.Classify(r)])
	}
	if k := fault.Find[*fault.Kill](m.Records); k != nil {
		eventLine(&b, x(k.At.Seconds()), plotH, fmt.Sprintf("%d node(s) down", len(k.Nodes)))
	}
	if r := fault.Find[*fault.Restart](m.Records); r != nil && r.Restarted {
		eventLine(&b, x(r.At.Seconds()), plotH, fmt.Sprintf("%d node(s) restarted empty", len(r.Nodes)))
	}
	if c := fault.Find[*fault.Crash](m.Records); c != nil {
		for _, k := range c.Kills {
			eventLine(&b, x(k.At.Seconds()), plotH, fmt.Sprintf("shop %d killed", k.Shop+1))
		}
	}
	legend(&b, []series{
		{name: "201", color: kindColor[tally.KindCreated]},
		{name: "202", color: kindColor[tally.KindQueued]},
		{name: "sold out", color: kindColor[tally.KindSoldOut]},
		{name: "duplicate", color: kindColor[tally.KindDuplicate]},
		{name: "error", color: kindColor[tally.KindError]},
	})
	if step > 1 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="tick" text-anchor="end">every %dth request shown</text>`, chartW-padR, chartH-4, step)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// eventLine draws a fault's moment in a scatter: a dashed line at x down
// the plot, plotH high, and its label beside it.
func eventLine(b *strings.Builder, x, plotH float64, label string) {
	fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" class="event"/>`, x, x, padT, padT+plotH)
	fmt.Fprintf(b, `<text x="%.1f" y="%d" class="event-label">%s</text>`, x+4, padT+12, html.EscapeString(label))
}
