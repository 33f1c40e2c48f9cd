package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/scenario"
)

// SweepDoc is a --sweep in report.json: per row, one point per offered
// rate, in the order they ran.
type SweepDoc struct {
	Rates            []string      `json:"rates"`
	OfferedPerSecond []float64     `json:"offered_per_second"`
	Rows             []SweepRowDoc `json:"rows"`
}

// SweepRowDoc is one row's points.
type SweepRowDoc struct {
	Mode   string          `json:"mode"`
	Points []SweepPointDoc `json:"points"`
}

// SweepPointDoc is one row at one offered rate: what was sent, the goodput
// (orders, and answers a buyer can act on: 201 and 409), and the latency.
type SweepPointDoc struct {
	OfferedPerSecond  float64 `json:"offered_per_second"`
	ReqPerSecond      float64 `json:"req_per_second"`
	OrdersPerSecond   float64 `json:"orders_per_second"`
	AnsweredPerSecond float64 `json:"answered_per_second"`
	Requests          int     `json:"requests"`
	Errors            int     `json:"errors"`
	Oversold          int     `json:"oversold"`
	P50Ms             float64 `json:"p50_ms"`
	P99Ms             float64 `json:"p99_ms"`
}

// rateLabel names an offered rate: "500/s", or "50/100ms".
func rateLabel(r vegeta.Rate) string {
	if r.Per == time.Second || r.Per == 0 {
		return strconv.Itoa(r.Freq) + "/s"
	}
	return scenario.FormatRate(r)
}

func perSecond(r vegeta.Rate) float64 {
	s := scenario.Settings{Rate: r.Freq, RatePer: r.Per}
	return s.PerSecond()
}

// newSweepDoc is o's sweep, or nil without one.
func newSweepDoc(o *scenario.Outcome) *SweepDoc {
	if len(o.Sweep) == 0 {
		return nil
	}
	d := &SweepDoc{}
	at := map[string]int{}
	for _, p := range o.Sweep {
		d.Rates = append(d.Rates, scenario.FormatRate(p.Rate))
		d.OfferedPerSecond = append(d.OfferedPerSecond, perSecond(p.Rate))
		for _, m := range p.Modes {
			i, ok := at[string(m.Mode)]
			if !ok {
				i = len(d.Rows)
				at[string(m.Mode)] = i
				d.Rows = append(d.Rows, SweepRowDoc{Mode: string(m.Mode)})
			}
			d.Rows[i].Points = append(d.Rows[i].Points, SweepPointDoc{
				OfferedPerSecond: perSecond(p.Rate), ReqPerSecond: m.ReqPerSec(), OrdersPerSecond: m.OrdersPerSec(),
				AnsweredPerSecond: answeredPerSec(m), Requests: m.Tally.Requests, Errors: m.Tally.ErrorCount(),
				Oversold: m.Audit.Oversold, P50Ms: ms(m.Metrics.Latencies.P50), P99Ms: ms(m.Metrics.Latencies.P99),
			})
		}
	}
	return d
}

// SweepColumns are the sweep table's headers.
var SweepColumns = []string{"mode", "offered", "req/s", "orders/s", "answered/s", "errors", "oversold", "p50", "p99"}

// SweepRows are the sweep table's cells: per row, its points in rate order.
func SweepRows(o *scenario.Outcome) [][]string {
	d := newSweepDoc(o)
	if d == nil {
		return nil
	}
	var rows [][]string
	for _, r := range d.Rows {
		for _, p := range r.Points {
			rows = append(rows, []string{
				r.Mode, fmt.Sprintf("%.0f/s", p.OfferedPerSecond), fmt.Sprintf("%.0f", p.ReqPerSecond),
				fmt.Sprintf("%.0f", p.OrdersPerSecond), fmt.Sprintf("%.0f", p.AnsweredPerSecond),
				strconv.Itoa(p.Errors), strconv.Itoa(p.Oversold),
				Millis(time.Duration(p.P50Ms * float64(time.Millisecond))), Millis(time.Duration(p.P99Ms * float64(time.Millisecond))),
			})
		}
	}
	return rows
}

// writeSweepText writes the sweep table, aligned, and what it shows.
func writeSweepText(b *strings.Builder, o *scenario.Outcome) {
	rows := append([][]string{SweepColumns}, SweepRows(o)...)
	widths := make([]int, len(SweepColumns))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for n, r := range rows {
		if n > 1 && r[0] != rows[n-1][0] {
			b.WriteString("\n")
		}
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + kneeLines(o))
	if bad := o.Unsafe(); len(bad) > 0 {
		fmt.Fprintf(b, "\nUNSAFE: a safe mode oversold or duplicated:\n  %s\n", strings.Join(bad, "\n  "))
	}
}

// sweepMarkdown is the sweep table in Markdown, with the knee lines.
func sweepMarkdown(o *scenario.Outcome) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(SweepColumns, " | ") + " |\n|---|")
	b.WriteString(strings.Repeat("---:|", len(SweepColumns)-1) + "\n")
	for _, r := range SweepRows(o) {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n")
	for _, l := range strings.Split(strings.TrimSpace(kneeLines(o)), "\n") {
		b.WriteString("- " + l + "\n")
	}
	return b.String()
}

// kneeLines says, per row, the first offered rate whose p99 passed 100 ms,
// from the points: the saturation knee as far as the sweep saw it.
func kneeLines(o *scenario.Outcome) string {
	d := newSweepDoc(o)
	var b strings.Builder
	for _, r := range d.Rows {
		knee := ""
		for _, p := range r.Points {
			if p.P99Ms > kneeMs {
				knee = fmt.Sprintf("p99 passed %dms at %.0f/s offered (%.0f ms)", kneeMs, p.OfferedPerSecond, p.P99Ms)
				break
			}
		}
		if knee == "" {
			knee = fmt.Sprintf("p99 stayed under %dms up to %.0f/s offered", kneeMs, r.Points[len(r.Points)-1].OfferedPerSecond)
		}
		fmt.Fprintf(&b, "%-13s %s\n", r.Mode+":", knee)
	}
	return b.String()
}

// kneeMs is the guide line of the sweep chart: where a strategy's p99
// leaves it, it is saturated for a buyer.
const kneeMs = 100

// palette colours the sweep chart's lines, one per row.
var palette = []string{"#c62828", "#ef6c00", "#f9a825", "#2e7d32", "#00838f", "#1565c0", "#6a1b9a", "#ad1457", "#4e342e", "#546e7a", "#9e9d24", "#283593"}

// sweepChart draws p99 (log scale) against the offered rate, one line per
// row, with a dashed guide at 100 ms.
func sweepChart(o *scenario.Outcome) string {
	d := newSweepDoc(o)
	var b strings.Builder
	svgOpen(&b, "p99 against offered rate (log scale; dashed: 100 ms)")
	lo, hi := math.Inf(1), kneeMs*1.0
	for _, r := range d.Rows {
		for _, p := range r.Points {
			lo, hi = min(lo, max(p.P99Ms, 0.1)), max(hi, p.P99Ms)
		}
	}
	lo, hi = math.Floor(math.Log10(min(lo, kneeMs))), math.Ceil(math.Log10(hi))
	if hi <= lo {
		hi = lo + 1
	}
	plotW, plotH := float64(chartW-padL-padR-90), float64(chartH-padT-padB)
	n := len(d.OfferedPerSecond)
	x := func(i int) float64 {
		if n == 1 {
			return padL + plotW/2
		}
		return padL + 10 + float64(i)*(plotW-20)/float64(n-1)
	}
	y := func(v float64) float64 { return padT + plotH - (math.Log10(max(v, 0.1))-lo)/(hi-lo)*plotH }
	for e := lo; e <= hi; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, padL, padL+plotW, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="tick" text-anchor="end">%s</text>`, padL-6, y(v)+4, Millis(time.Duration(v*float64(time.Millisecond))))
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" class="kill"/>`, padL, padL+plotW, y(kneeMs), y(kneeMs))
	for i, v := range d.OfferedPerSecond {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick" text-anchor="middle">%.0f/s</text>`, x(i), chartH-padB+16, v)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick" text-anchor="middle">offered rate</text>`, padL+plotW/2, chartH-6)
	for ri, r := range d.Rows {
		color := palette[ri%len(palette)]
		var pts []string
		for i, p := range r.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(p.P99Ms)))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s at %.0f/s: p99 %s</title></circle>`,
				x(i), y(p.P99Ms), color, html.EscapeString(r.Mode), p.OfferedPerSecond, Millis(time.Duration(p.P99Ms*float64(time.Millisecond))))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8"/>`, strings.Join(pts, " "), color)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="10" height="10" fill="%s"/><text x="%.1f" y="%d" class="tick">%s</text>`,
			padL+plotW+12, padT+ri*15, color, padL+plotW+26, padT+ri*15+9, html.EscapeString(r.Mode))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
