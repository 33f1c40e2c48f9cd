package report

import (
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// TestHeldLine: the peak, and each rate past it as a fraction of the
// peak, with the p99 of the answers it shed.
func TestHeldLine(t *testing.T) {
	r := SweepRowDoc{Strategy: "sql-atomic", Points: []SweepPointDoc{
		{OfferedPerSecond: 1000, OrdersPerSecond: 1000},
		{OfferedPerSecond: 2000, OrdersPerSecond: 2000, Shed: 3, ShedP99Ms: 1.5},
		{OfferedPerSecond: 8000, OrdersPerSecond: 1500, Shed: 900, ShedP99Ms: 4},
	}}
	got := heldLine(r)
	for _, want := range []string{"peak 2000 orders/s at 2000/s offered", "8000/s: 0.75× the peak, shed answered at p99 within 4.0ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("heldLine = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "1000/s:") {
		t.Errorf("heldLine = %q: a rate below the peak's is not past it", got)
	}
}

// TestShedFigures: only 503 and 429 answers count as shed.
func TestShedFigures(t *testing.T) {
	m := &scenario.StrategyResult{}
	for i, code := range []uint16{201, 503, 429, 409, 503, 0} {
		m.Results = append(m.Results, vegeta.Result{Code: code, Latency: time.Duration(i+1) * time.Millisecond})
	}
	n, p99 := shedFigures(m)
	if n != 3 || p99 != 5*time.Millisecond {
		t.Errorf("shedFigures = %d, %v; want 3, 5ms", n, p99)
	}
}
