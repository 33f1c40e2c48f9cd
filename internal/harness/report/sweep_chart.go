package report

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"time"
)

// The sweep's two charts put the offered rate on x to scale, from 0, so
// that the goodput chart's y = x guide is a straight diagonal, and a
// row's knee (kneeMs) sits at the same x on both.

// palette colours the sweep charts' lines, one per row. It has no red: on
// this page red marks what is wrong (oversold, duplicate orders), and a
// strategy's line is not.
var palette = []string{"#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#00838f", "#9e9d24", "#ad1457", "#4e342e", "#546e7a", "#283593", "#f9a825", "#00695c"}

// legendW is the room the sweep charts keep on the right for the rows'
// names and the key.
const legendW = 114

// sweepPlot maps a sweep's offered rates to a chart's x, to scale; each
// chart brings its own y.
type sweepPlot struct {
	d                 *SweepDoc
	left, top, w, h   float64
	xMax              float64 // the offered rate at the right edge
	legendX, legendY0 float64
}

func newSweepPlot(d *SweepDoc) sweepPlot {
	p := sweepPlot{d: d, left: padL, top: padT, w: chartW - padL - padR - legendW, h: chartH - padT - padB}
	for _, v := range d.OfferedPerSecond {
		p.xMax = max(p.xMax, v)
	}
	p.xMax = max(p.xMax*1.04, 1) // room for the last point's knee ring
	p.legendX, p.legendY0 = p.left+p.w+14, p.top
	return p
}

// x is the offered rate v's x.
func (p sweepPlot) x(v float64) float64 { return p.left + v/p.xMax*p.w }

// xAxis labels each offered rate under its x, leaving out a label that
// would run into the one before it.
func (p sweepPlot) xAxis(b *strings.Builder) {
	rates := slices.Clone(p.d.OfferedPerSecond)
	slices.Sort(rates)
	last := math.Inf(-1)
	for _, v := range slices.Compact(rates) {
		x := p.x(v)
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, x, x, p.top+p.h, p.top+p.h+4)
		if x-last < 40 {
			continue
		}
		last = x
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" class="tick" text-anchor="middle">%.0f/s</text>`, x, p.top+p.h+16, v)
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" class="tick" text-anchor="middle">offered rate</text>`, p.left+p.w/2, chartH-4)
}

// points is r's points in the order of their offered rate, so that a line
// through them does not turn back whatever order the rates ran in, and the
// index of its knee among them (-1 for none).
func points(r SweepRowDoc) ([]SweepPointDoc, int) {
	ps := slices.Clone(r.Points)
	slices.SortStableFunc(ps, func(a, b SweepPointDoc) int { return cmp.Compare(a.OfferedPerSecond, b.OfferedPerSecond) })
	k, ok := knee(r)
	if !ok {
		return ps, -1
	}
	return ps, slices.IndexFunc(ps, func(p SweepPointDoc) bool { return p.OfferedPerSecond == k.OfferedPerSecond })
}

// line draws one row's values as a polyline with a dot per point (hollow
// if dashed), each dot titled with tip; they are the chart's data marks.
func line(b *strings.Builder, xs, ys []float64, color string, dashed bool, tip func(i int) string) {
	var pts []string
	for i := range xs {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", xs[i], ys[i]))
	}
	dash, fill := "", color
	if dashed {
		dash, fill = ` stroke-dasharray="5 3"`, "#fff"
	}
	fmt.Fprintf(b, `<polyline class="mark" points="%s" fill="none" stroke="%s" stroke-width="1.8"%s/>`, strings.Join(pts, " "), color, dash)
	for i := range xs {
		fmt.Fprintf(b, `<circle class="mark" cx="%.1f" cy="%.1f" r="2.6" fill="%s" stroke="%s"><title>%s</title></circle>`,
			xs[i], ys[i], fill, color, html.EscapeString(tip(i)))
	}
}

// kneeRing circles a row's knee at x, y.
func kneeRing(b *strings.Builder, x, y float64, color, strategy string, p SweepPointDoc) {
	fmt.Fprintf(b, `<circle class="knee" cx="%.1f" cy="%.1f" r="6.5" fill="none" stroke="%s" stroke-width="1.6"><title>%s's knee: p99 passed %d ms at %.0f/s offered</title></circle>`,
		x, y, color, html.EscapeString(strategy), kneeMs, p.OfferedPerSecond)
}

// legend writes the rows' names down the right in their lines' colours,
// then the key: one sample (an SVG fragment drawn at 0,0) and label each.
func (p sweepPlot) legend(b *strings.Builder, key [][2]string) {
	y := p.legendY0
	for ri, r := range p.d.Rows {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"/><text x="%.1f" y="%.1f" class="tick">%s</text>`,
			p.legendX, y, palette[ri%len(palette)], p.legendX+14, y+9, html.EscapeString(r.Strategy))
		y += 15
	}
	y += 6
	for _, k := range key {
		fmt.Fprintf(b, `<g transform="translate(%.1f %.1f)">%s</g><text x="%.1f" y="%.1f" class="tick">%s</text>`,
			p.legendX, y+5, k[0], p.legendX+24, y+9, html.EscapeString(k[1]))
		y += 15
	}
}

// Samples for the legends' keys, drawn at 0,0.
const (
	keySolid  = `<line x1="0" x2="18" y1="0" y2="0" stroke="#424242" stroke-width="1.8"/>`
	keyDashed = `<line x1="0" x2="18" y1="0" y2="0" stroke="#424242" stroke-width="1.8" stroke-dasharray="5 3"/>`
	keyGuide  = `<line x1="0" x2="18" y1="0" y2="0" class="guide"/>`
	keyRing   = `<circle cx="9" cy="0" r="5" fill="none" stroke="#424242" stroke-width="1.6"/>`
)

// goodputChart draws each row's orders/s (solid) and answered/s (dashed)
// against the offered rate, with the y = x guide: a row on the guide
// answers every click it is offered, and where it falls away from it the
// shop stops keeping up. A ring marks each row's knee.
func goodputChart(d *SweepDoc) string {
	p := newSweepPlot(d)
	top := 0.0
	for _, v := range d.OfferedPerSecond {
		top = max(top, v)
	}
	for _, r := range d.Rows {
		for _, pt := range r.Points {
			top = max(top, pt.OrdersPerSecond, pt.AnsweredPerSecond)
		}
	}
	top, step := niceScale(top)
	y := func(v float64) float64 { return p.top + p.h - v/top*p.h }

	var b strings.Builder
	svgOpen(&b, "Goodput against the offered rate")
	for v := 0.0; v <= top+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, p.left, p.left+p.w, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="tick" text-anchor="end">%s</text>`, p.left-6, y(v)+4, num(v))
	}
	fmt.Fprintf(&b, `<text x="14" y="%.0f" class="tick" transform="rotate(-90 14 %.0f)" text-anchor="middle">per second</text>`,
		p.top+p.h/2, p.top+p.h/2)
	end := min(p.xMax, top)
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="guide"><title>y = x: the offered rate</title></line>`,
		p.x(0), p.x(end), y(0), y(end))
	p.xAxis(&b)
	for ri, r := range d.Rows {
		color := palette[ri%len(palette)]
		ps, k := points(r)
		xs, orders, answered := make([]float64, len(ps)), make([]float64, len(ps)), make([]float64, len(ps))
		for i, pt := range ps {
			xs[i], orders[i], answered[i] = p.x(pt.OfferedPerSecond), y(pt.OrdersPerSecond), y(pt.AnsweredPerSecond)
		}
		line(&b, xs, answered, color, true, func(i int) string {
			return fmt.Sprintf("%s at %.0f/s offered: %.0f answered/s", r.Strategy, ps[i].OfferedPerSecond, ps[i].AnsweredPerSecond)
		})
		line(&b, xs, orders, color, false, func(i int) string {
			return fmt.Sprintf("%s at %.0f/s offered: %.0f orders/s", r.Strategy, ps[i].OfferedPerSecond, ps[i].OrdersPerSecond)
		})
		if k >= 0 {
			kneeRing(&b, xs[k], orders[k], color, r.Strategy, ps[k])
		}
	}
	p.legend(&b, [][2]string{{keySolid, "orders/s"}, {keyDashed, "answered/s"}, {keyGuide, "offered (y = x)"},
		{keyRing, "knee"}})
	b.WriteString(`</svg>`)
	return b.String()
}

// p99Chart draws each row's p99 against the offered rate, on a log scale,
// with a dashed guide at kneeMs and a ring at each row's knee.
func p99Chart(d *SweepDoc) string {
	p := newSweepPlot(d)
	lo, hi := math.Inf(1), float64(kneeMs)
	for _, r := range d.Rows {
		for _, pt := range r.Points {
			lo, hi = min(lo, max(pt.P99Ms, 0.1)), max(hi, pt.P99Ms)
		}
	}
	lo, hi = math.Floor(math.Log10(min(lo, kneeMs))), math.Ceil(math.Log10(hi))
	if hi <= lo {
		hi = lo + 1
	}
	y := func(v float64) float64 { return p.top + p.h - (math.Log10(max(v, 0.1))-lo)/(hi-lo)*p.h }

	var b strings.Builder
	svgOpen(&b, "p99 against the offered rate (log scale)")
	for e := lo; e <= hi; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, p.left, p.left+p.w, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="tick" text-anchor="end">%s</text>`, p.left-6, y(v)+4, Millis(time.Duration(v*float64(time.Millisecond))))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="guide"><title>%d ms: past it a row is saturated</title></line>`,
		p.left, p.left+p.w, y(kneeMs), y(kneeMs), kneeMs)
	p.xAxis(&b)
	for ri, r := range d.Rows {
		color := palette[ri%len(palette)]
		ps, k := points(r)
		xs, ys := make([]float64, len(ps)), make([]float64, len(ps))
		for i, pt := range ps {
			xs[i], ys[i] = p.x(pt.OfferedPerSecond), y(pt.P99Ms)
		}
		line(&b, xs, ys, color, false, func(i int) string {
			return fmt.Sprintf("%s at %.0f/s offered: p99 %s", r.Strategy, ps[i].OfferedPerSecond, Millis(time.Duration(ps[i].P99Ms*float64(time.Millisecond))))
		})
		if k >= 0 {
			kneeRing(&b, xs[k], ys[k], color, r.Strategy, ps[k])
		}
	}
	p.legend(&b, [][2]string{{keyGuide, fmt.Sprintf("%d ms", kneeMs)}, {keyRing, "knee"}})
	b.WriteString(`</svg>`)
	return b.String()
}
