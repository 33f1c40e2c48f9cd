package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"

	"github.com/flashsale/flashsale/internal/scenario"
)

//go:embed report.html.tmpl
var htmlSource string

// page is parsed once; html/template escapes every value except the SVG,
// which svg.go builds with every label escaped.
var page = template.Must(template.New("report").Parse(htmlSource))

// htmlData is what report.html.tmpl renders.
type htmlData struct {
	Title    string
	Columns  []string
	Rows     [][]string
	Modes    []*scenario.ModeResult
	Unsafe   []string
	Settings string
	Machine  string
	Charts   []template.HTML
	Scatters []template.HTML
	RawFiles []string
	// SweepColumns, SweepRows and SweepChart show a --sweep.
	SweepColumns []string
	SweepRows    [][]string
	SweepChart   template.HTML
}

// writeHTML writes a self-contained page: the table, the why-lines, and
// the charts (oversold and duplicate orders, throughput, latency
// percentiles per mode, and each attack's latency over time).
func writeHTML(w io.Writer, o *scenario.Outcome) error {
	d := htmlData{
		Title:    "双11 (Double 11) flash sale: strategies side by side",
		Columns:  Columns,
		Rows:     Rows(o),
		Modes:    o.Modes,
		Unsafe:   o.Unsafe(),
		Settings: fmt.Sprintf("loadgen %s (%d clicks planned)", settingsLine(o), o.Settings.PlannedRequests()),
		Machine:  machineLine(o),
	}
	var cats []string
	var oversold, dups, reqs, orders, p50, p95, p99 []float64
	for _, m := range o.Modes {
		cats = append(cats, string(m.Mode))
		oversold = append(oversold, float64(m.Audit.Oversold))
		dups = append(dups, float64(m.Audit.DuplicateOrders))
		reqs = append(reqs, m.ReqPerSec())
		orders = append(orders, m.OrdersPerSec())
		l := m.Metrics.Latencies
		p50, p95, p99 = append(p50, ms(l.P50)), append(p95, ms(l.P95)), append(p99, ms(l.P99))
		d.Scatters = append(d.Scatters, template.HTML(latencyScatter(m)))
		d.RawFiles = append(d.RawFiles, RawFile(string(m.Mode)))
	}
	d.Charts = []template.HTML{
		template.HTML(barChart("Oversold units and duplicate orders (audit)", "count", cats, []series{
			{name: "oversold", color: "#c62828", values: oversold},
			{name: "duplicate orders", color: "#6a1b9a", values: dups},
		})),
		template.HTML(barChart("Throughput", "per second", cats, []series{
			{name: "requests/s", color: "#1565c0", values: reqs},
			{name: "orders/s", color: "#2e7d32", values: orders},
		})),
		template.HTML(barChart("Latency percentiles", "milliseconds", cats, []series{
			{name: "p50", color: "#90caf9", values: p50},
			{name: "p95", color: "#1e88e5", values: p95},
			{name: "p99", color: "#0d47a1", values: p99},
		})),
	}
	if len(o.Sweep) > 0 {
		d.SweepColumns, d.SweepRows, d.SweepChart = SweepColumns, SweepRows(o), template.HTML(sweepChart(o))
	}
	return page.Execute(w, d)
}
