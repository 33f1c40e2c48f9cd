package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/webfont"
)

//go:embed report.html.tmpl
var htmlSource string

// page is parsed once; html/template escapes every value except the SVG,
// which svg.go builds with every label escaped.
var page = template.Must(template.New("report").Parse(htmlSource))

// htmlData is what report.html.tmpl renders. A section with nothing to
// draw is left empty, and the page prints a line saying why in its place
// (Notes) or leaves it out: no empty chart, no table of headers only.
type htmlData struct {
	// FontFace is the page's own 双 (webfont.FaceCSS).
	FontFace template.CSS
	Title    string
	Machine  string
	// Settings is the command that repeats the run, a flag and its value
	// to a piece, so that a line breaks between flags, not inside one.
	Settings []string
	// Sweep is a --sweep's section, nil for a run at one rate; a sweep has
	// no per-strategy table, charts or scatters.
	Sweep   *htmlSweep
	Columns []template.HTML
	Rows    [][]htmlCell
	// Life is a sale with payments' second table, nil without a pay
	// window.
	Life       *htmlLife
	Strategies []*scenario.StrategyResult
	// Skipped are the skipped strategies' why-lines, after Strategies'.
	Skipped []htmlWhy
	Unsafe  []string
	// RunNotes say how the run differs from one generator's complete run.
	RunNotes []string
	// Catalogue is a --products run's per-product section, nil for one
	// product; Masters where each row's load landed on a Redis Cluster,
	// with MastersIntro saying what they count.
	Catalogue    *htmlCatalogue
	Masters      []htmlWhy
	MastersIntro string
	// Charts are the per-strategy bar charts, Scatters each attack's latency
	// over time; Notes say which were left out, and why.
	Charts   []template.HTML
	Scatters []template.HTML
	Notes    []string
	RawFiles []string
}

// htmlKnee is a row's line under the sweep's charts: its knee (kneeLine)
// how it held its peak past it (heldLine), and its peak beside its
// ceiling (ceilingLine).
type htmlKnee struct{ Strategy, Knee, Held, Ceiling string }

// htmlSweep is the sweep's section: the goodput and p99 charts, where each
// row's knee is, and the table.
type htmlSweep struct {
	Charts  []template.HTML
	KneeMs  int
	Knees   []htmlKnee
	Columns []template.HTML
	Rows    [][]htmlCell
}

// writeHTML writes a self-contained page: for a --sweep, goodput and p99
// against the offered rate and the sweep's table; for a run at one rate,
// the table, the why-lines, and the charts (oversold and duplicate orders,
// throughput, latency percentiles per strategy, each attack's latency over
// time).
func writeHTML(w io.Writer, o *scenario.Outcome) error {
	d := htmlData{
		FontFace:   template.CSS(webfont.FaceCSS),
		Title:      "Double 11 (双11) flash sale: strategies side by side" + rttTitle(o.Settings),
		Machine:    machineLine(o),
		Settings:   flagPieces(settingsText(o)),
		Columns:    headers(Columns),
		Rows:       append(tableCells(o), skippedCells(o)...),
		Life:       newHTMLLife(o),
		Strategies: o.Strategies,
		Skipped:    skippedWhys(o),
		Unsafe:     o.Unsafe(),
		RunNotes:   RunNotes(o),

		Catalogue:    newHTMLCatalogue(o),
		Masters:      mastersLines(o),
		MastersIntro: mastersIntro,
	}
	if sd := newSweepDoc(o); sd != nil {
		d.Sweep = &htmlSweep{
			Charts: []template.HTML{template.HTML(goodputChart(sd)), template.HTML(p99Chart(sd))},
			KneeMs: kneeMs, Columns: headers(SweepColumns), Rows: sweepCells(o),
		}
		for _, r := range sd.Rows {
			d.Sweep.Knees = append(d.Sweep.Knees, htmlKnee{r.Strategy, kneeLine(r), heldLine(r), ceilingLine(r)})
		}
	}
	d.Charts, d.Notes = strategyCharts(o.Strategies)
	for _, m := range o.Strategies {
		d.RawFiles = append(d.RawFiles, RawFile(string(m.Strategy)))
		if len(m.Results) == 0 {
			d.Notes = append(d.Notes, fmt.Sprintf("%s sent no requests: it has no latency over time to draw.", m.Strategy))
			continue
		}
		d.Scatters = append(d.Scatters, template.HTML(latencyScatter(m)))
	}
	if slices.ContainsFunc(o.Strategies, func(m *scenario.StrategyResult) bool { return len(m.Runs) > 1 }) {
		d.Notes = append(d.Notes, "With --count, a row's charts show its run whose orders/s is the median; the table gives the median and min–max of every run.")
	}
	return page.Execute(w, d)
}

// strategyCharts draws the per-strategy bar charts of rows, and says which it left
// out because every bar would be 0.
func strategyCharts(rows []*scenario.StrategyResult) (charts []template.HTML, notes []string) {
	if len(rows) == 0 {
		return nil, nil
	}
	var cats []string
	var oversold, dups, reqs, orders, p50, p95, p99 []float64
	for _, m := range rows {
		cats = append(cats, string(m.Strategy))
		oversold = append(oversold, float64(m.Audit.Oversold))
		dups = append(dups, float64(m.Audit.DuplicateOrders))
		reqs = append(reqs, m.ReqPerSec())
		orders = append(orders, m.OrdersPerSec())
		l := m.Metrics.Latencies
		p50, p95, p99 = append(p50, ms(l.P50)), append(p95, ms(l.P95)), append(p99, ms(l.P99))
	}
	for _, c := range []struct {
		title, unit string
		ss          []series
		none        string
	}{
		{"Oversold units and duplicate orders (audit)", "count", []series{
			{name: "oversold", color: "#c62828", values: oversold},
			{name: "duplicate orders", color: "#6a1b9a", values: dups},
		}, "No row oversold a unit or wrote a duplicate order, so there are no audit bars to draw: oversold and dup_orders are 0 in the table."},
		{"Throughput", "per second", []series{
			{name: "requests/s", color: "#1565c0", values: reqs},
			{name: "orders/s", color: "#2e7d32", values: orders},
		}, "No row sent a request, so there is no throughput to draw."},
		{"Latency percentiles", "milliseconds", []series{
			{name: "p50", color: "#90caf9", values: p50},
			{name: "p95", color: "#1e88e5", values: p95},
			{name: "p99", color: "#0d47a1", values: p99},
		}, "No row was answered, so there are no latencies to draw."},
	} {
		if !anyAbove0(c.ss) {
			notes = append(notes, c.none)
			continue
		}
		charts = append(charts, template.HTML(barChart(c.title, c.unit, cats, c.ss)))
	}
	return charts, notes
}

// anyAbove0 reports whether a bar of ss would be drawn: a chart whose
// every value is 0 is axes and nothing else.
func anyAbove0(ss []series) bool {
	return slices.ContainsFunc(ss, func(s series) bool {
		return slices.ContainsFunc(s.values, func(v float64) bool { return v > 0 })
	})
}

// headers are a table's column names, escaped, each with a line break
// allowed after its '_' and a '/' not followed by a unit ("dup_"
// "rejected", "cpu/" "order", but "orders/s" whole): the names are wider
// than the figures under them, and a table that may break them fits the
// page at 1,280 pixels without scrolling.
func headers(cols []string) []template.HTML {
	out := make([]template.HTML, len(cols))
	for i, c := range cols {
		c = strings.ReplaceAll(template.HTMLEscapeString(c), "_", "_<wbr>")
		if !strings.HasSuffix(c, "/s") {
			c = strings.ReplaceAll(c, "/", "/<wbr>")
		}
		out[i] = template.HTML(c)
	}
	return out
}

// settingsText is the command that repeats o, with the clicks it planned
// (a sweep's differ at each rate, so it says none).
func settingsText(o *scenario.Outcome) string {
	if len(o.Sweep) > 0 {
		return "loadgen " + settingsLine(o)
	}
	return fmt.Sprintf("loadgen %s (%d clicks planned)", settingsLine(o), o.Settings.PlannedRequests())
}

// flagPieces cuts a command line before each "--": "loadgen", "--users
// 660", "--rate 250"...
func flagPieces(cmd string) []string {
	pieces := strings.Split(cmd, " --")
	for i := 1; i < len(pieces); i++ {
		pieces[i] = "--" + pieces[i]
	}
	return pieces
}
