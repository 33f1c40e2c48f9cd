package report

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A Figure is one number of a row, by the name --threshold, report.json's
// "figures" and loadgen compare use for it.
type Figure struct {
	Name string
	// Unit is "ms" for latencies (read from the results in milliseconds),
	// "/s" for rates, "" for counts.
	Unit string
	// OfRequests: a threshold may give the figure as a share of the
	// row's requests (errors<1%).
	OfRequests bool
	// Lower says which way is better, for compare: true if less is better.
	Lower bool
	// Audited: the figure is the fleet's audit, which a part of a crowd
	// does not read (loadgen merge does, once): a part neither shows nor
	// checks it.
	Audited bool
	of      func(*scenario.StrategyResult) float64
}

// Of is the figure's value in m.
func (f Figure) Of(m *scenario.StrategyResult) float64 { return f.of(m) }

// Figures are every figure of a row, in the table's order.
var Figures = []Figure{
	{Name: "reqs", of: func(m *scenario.StrategyResult) float64 { return float64(m.Tally.Requests) }},
	{Name: "201", of: func(m *scenario.StrategyResult) float64 { return float64(m.Tally.Created) }},
	{Name: "sold_out", OfRequests: true, of: func(m *scenario.StrategyResult) float64 { return float64(m.Tally.SoldOut) }},
	{Name: "dup_rejected", OfRequests: true, of: func(m *scenario.StrategyResult) float64 { return float64(m.Tally.DupRejected()) }},
	{Name: "errors", OfRequests: true, Lower: true, of: func(m *scenario.StrategyResult) float64 { return float64(m.Tally.ErrorCount()) }},
	{Name: "503s", OfRequests: true, Lower: true, of: func(m *scenario.StrategyResult) float64 { return float64(m.Tally.Status[503]) }},
	{Name: "orders", Audited: true, of: func(m *scenario.StrategyResult) float64 { return float64(m.Audit.Orders) }},
	{Name: "oversold", Lower: true, Audited: true, of: func(m *scenario.StrategyResult) float64 { return float64(m.Audit.Oversold) }},
	{Name: "dup_orders", Lower: true, Audited: true, of: func(m *scenario.StrategyResult) float64 { return float64(m.Audit.DuplicateOrders) }},
	{Name: "req/s", Unit: "/s", of: func(m *scenario.StrategyResult) float64 { return m.ReqPerSec() }},
	{Name: "orders/s", Unit: "/s", of: func(m *scenario.StrategyResult) float64 { return m.OrdersPerSec() }},
	{Name: "answered/s", Unit: "/s", of: answeredPerSec},
	{Name: "p50", Unit: "ms", Lower: true, of: func(m *scenario.StrategyResult) float64 { return ms(m.Metrics.Latencies.P50) }},
	{Name: "p95", Unit: "ms", Lower: true, of: func(m *scenario.StrategyResult) float64 { return ms(m.Metrics.Latencies.P95) }},
	{Name: "p99", Unit: "ms", Lower: true, of: func(m *scenario.StrategyResult) float64 { return ms(m.Metrics.Latencies.P99) }},
	{Name: "max", Unit: "ms", Lower: true, of: func(m *scenario.StrategyResult) float64 { return ms(m.Metrics.Latencies.Max) }},
}

// answeredPerSec is goodput in answers: the requests answered with an
// order or an expected 409 (sold out, a repeated click), per second of
// attack. Errors (503s, timeouts) are not answers a buyer can act on.
func answeredPerSec(m *scenario.StrategyResult) float64 {
	if s := m.Elapsed().Seconds(); s > 0 {
		return float64(m.Tally.Requests-m.Tally.ErrorCount()) / s
	}
	return 0
}

// FigureNamed returns the figure called name.
func FigureNamed(name string) (Figure, bool) {
	i := slices.IndexFunc(Figures, func(f Figure) bool { return f.Name == name })
	if i < 0 {
		return Figure{}, false
	}
	return Figures[i], true
}

// figureValues is every figure of m, a row of o, by name; a part's
// leaves the audit's out.
func figureValues(o *scenario.Outcome, m *scenario.StrategyResult) map[string]float64 {
	out := make(map[string]float64, len(Figures))
	for _, f := range Figures {
		if !unaudited(o, f) {
			out[f.Name] = f.Of(m)
		}
	}
	return out
}

// unaudited reports whether o is a part of a crowd and f a figure of the
// audit it did not read.
func unaudited(o *scenario.Outcome, f Figure) bool {
	return f.Audited && !o.Settings.Part.Whole()
}

// PartAudit is what a part of a crowd shows in place of the audit's
// figures: the audit is loadgen merge's, once every part is done.
const PartAudit = "audit: done by loadgen merge, once every part is done"

// Spread is one figure over a row's --count runs.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// spreadOf is f over the runs: the median (the mean of the middle two for
// an even count), the least and the most.
func spreadOf(f Figure, runs []*scenario.StrategyResult) Spread {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f.Of(r)
	}
	slices.Sort(v)
	n := len(v)
	if n == 0 {
		return Spread{}
	}
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return Spread{Median: med, Min: v[0], Max: v[n-1]}
}

// spreads is every figure over m's runs, or nil for a row run once.
func spreads(m *scenario.StrategyResult) map[string]Spread {
	if len(m.Runs) < 2 {
		return nil
	}
	out := make(map[string]Spread, len(Figures))
	for _, f := range Figures {
		out[f.Name] = spreadOf(f, m.Runs)
	}
	return out
}

// spreadCell renders a figure over several runs for the table: "44 (40–48)",
// or just "44" when every run reads the same as written (250 req/s and
// 250.4 req/s both read "250").
func spreadCell(f Figure, runs []*scenario.StrategyResult) string {
	s := spreadOf(f, runs)
	med, lo, hi := formatFigure(f, s.Median), formatFigure(f, s.Min), formatFigure(f, s.Max)
	if lo == hi {
		return med
	}
	return fmt.Sprintf("%s (%s–%s)", med, lo, hi)
}

// formatFigure renders v as the table does: latencies as Millis, rates and
// counts as whole numbers.
func formatFigure(f Figure, v float64) string {
	switch f.Unit {
	case "ms":
		return Millis(time.Duration(v * float64(time.Millisecond)))
	case "/s":
		return fmt.Sprintf("%.0f", v)
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return fmt.Sprintf("%.1f", v)
}
