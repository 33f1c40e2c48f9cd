package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The charts are plain SVG written by hand (the bars here, the latency
// scatter in scatter.go, the sweep's lines in sweep_chart.go), so
// report.html needs no script and no network to show them. Whatever stands
// for a figure (a bar, a dot, a line) has class "mark", and axes, guides
// and legends do not: a chart without a mark would be empty, and the
// page's tests count them. The page scales each chart to its column.

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
// each labelled with its value: across, above the bar, if every label fits
// the width of its bar, else all of them turned upright (valueLabels).
func barChart(title, unit string, cats []string, ss []series) string {
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	groupW := plotW / float64(max(len(cats), 1))
	barW := groupW * 0.7 / float64(max(len(ss), 1))
	top, step, upright := valueLabels(ss, barW, plotH)
	y := func(v float64) float64 { return padT + plotH - v/top*plotH }

	var b strings.Builder
	svgOpen(&b, title)
	for v := 0.0; v <= top+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/>`, padL, chartW-padR, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="tick" text-anchor="end">%s</text>`, padL-6, y(v)+4, num(v))
	}
	fmt.Fprintf(&b, `<text x="14" y="%d" class="tick" transform="rotate(-90 14 %d)" text-anchor="middle">%s</text>`,
		padT+int(plotH/2), padT+int(plotH/2), html.EscapeString(unit))
	for c, cat := range cats {
		x0 := padL + groupW*float64(c) + groupW*0.15
		for si, s := range ss {
			v := s.values[c]
			x := x0 + barW*float64(si)
			fmt.Fprintf(&b, `<rect class="mark" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`,
				x, y(v), barW-2, padT+plotH-y(v), s.color, html.EscapeString(cat), html.EscapeString(s.name), num(v))
			lx, ly := x+barW/2-1, y(v)-3
			if upright {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="val" transform="rotate(-90 %.1f %.1f)" dominant-baseline="central">%s</text>`,
					lx, ly, lx, ly, num(v))
			} else {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="val" text-anchor="middle">%s</text>`, lx, ly, num(v))
			}
		}
		catLabel(&b, x0+groupW*0.35, chartH-padB+18, cat, groupW)
	}
	legend(&b, ss)
	b.WriteString(`</svg>`)
	return b.String()
}

// valCharW is the width of a character of the class "val" font (11 px),
// on average, as the labels' room is reckoned.
const valCharW = 6.4

// valueLabels decides how barChart labels its bars, barW wide in a plot
// plotH high: upright when a label is wider than its bar (many rows and
// series, or long figures), so that neighbours' labels do not run into
// each other, and across otherwise. It returns the value axis's top and
// step (niceScale) with room above the tallest bar for an upright label.
func valueLabels(ss []series, barW, plotH float64) (top, step float64, upright bool) {
	most, widest := 0.0, 0.0
	for _, s := range ss {
		for _, v := range s.values {
			most, widest = max(most, v), max(widest, float64(len(num(v)))*valCharW)
		}
	}
	top, step = niceScale(most)
	if widest <= barW {
		return top, step, false
	}
	if room := widest + 4; (top-most)/top*plotH < room {
		top, step = niceScale(most * plotH / (plotH - room))
	}
	return top, step, true
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

// niceScale returns a linear axis for values up to v: the gap between
// ticks, 1, 2, 2.5 or 5 times a power of ten chosen for about four of
// them (at least 1 when v is, so that counts tick in whole numbers), and
// the top, the first tick at or above v. An axis for v <= 0 reads 0 to 1.
func niceScale(v float64) (top, step float64) {
	if v <= 0 {
		return 1, 0.25
	}
	raw := v / 4
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * p
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	if v >= 1 {
		step = max(step, 1)
	}
	return math.Ceil(v/step-1e-9) * step, step
}

// num renders a chart value: integers plainly, others with one decimal.
func num(v float64) string {
	if v == math.Trunc(v) || v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
