package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A flash sale's crowd is always bigger than the shop, so a sweep asks of
// each row what a shop under a crowd owes its buyers: past its knee it
// keeps selling at its peak, and the clicks it cannot serve are told so
// at once. heldLine says both, from the points: the peak orders/s, the
// orders/s at each rate past the peak as a fraction of it, and how fast
// the refused clicks (503 and 429, shed) were answered.

// shedFigures counts the answers of m that turned a buyer away because
// the shop was full (503 or 429), and the 99th percentile of their
// latency; 0 and 0 if there were none.
func shedFigures(m *scenario.StrategyResult) (n int, p99 time.Duration) {
	var lat []time.Duration
	for _, r := range m.Results {
		if shed(r) {
			lat = append(lat, r.Latency)
		}
	}
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return len(lat), lat[(len(lat)*99+99)/100-1]
}

// shed reports whether r is an answer that turned its buyer away for
// load: 503 (busy, lock_timeout, unavailable...) or 429 (rate_limited).
func shed(r vegeta.Result) bool { return r.Code == 503 || r.Code == 429 }

// heldLine says how r held its peak past it (see above), e.g. "peak 2409
// orders/s at 4000/s offered; 8000/s: 0.67× the peak, shed answered at
// p99 within 3.1ms".
func heldLine(r SweepRowDoc) string {
	if len(r.Points) == 0 {
		return "no points"
	}
	peak := r.Points[0]
	for _, p := range r.Points {
		if p.OrdersPerSecond > peak.OrdersPerSecond {
			peak = p
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "peak %.0f orders/s at %.0f/s offered", peak.OrdersPerSecond, peak.OfferedPerSecond)
	for _, p := range r.Points {
		if p.OfferedPerSecond <= peak.OfferedPerSecond || peak.OrdersPerSecond <= 0 {
			continue
		}
		fmt.Fprintf(&b, "; %.0f/s: %.2f× the peak", p.OfferedPerSecond, p.OrdersPerSecond/peak.OrdersPerSecond)
		if p.Shed > 0 {
			fmt.Fprintf(&b, ", shed answered at p99 within %s", shedP99Cell(p))
		}
	}
	return b.String()
}

// shedP99Cell is p's shed p99 for a table, "-" with nothing shed.
func shedP99Cell(p SweepPointDoc) string {
	if p.Shed == 0 {
		return "-"
	}
	return Millis(time.Duration(p.ShedP99Ms * float64(time.Millisecond)))
}
