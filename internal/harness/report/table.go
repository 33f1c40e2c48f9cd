package report

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// Columns are the table's headers, in order. The first column is the strategy;
// every other is right-aligned.
var Columns = []string{
	"strategy", "reqs", "201", "202", "sold_out", "dup_rejected", "errors", "orders",
	"oversold", "dup_orders", "consistent", "drain", "req/s", "orders/s", "cpu/order", "p50", "p95", "p99",
}

// Rows returns the table's cells, one row per strategy, in Columns order:
// answers counted by the load generator (reqs..errors), the shop's audit
// (orders..consistent), the seconds a queued strategy's queue took to drain
// after the last click ("-" for the others), Vegeta's rate, the fleet's CPU time per order
// (tally.CPUMeter says whose), and Vegeta's latency figures.
func Rows(o *scenario.Outcome) [][]string {
	rows := make([][]string, 0, len(o.Strategies))
	for _, m := range o.Strategies {
		t, a := m.Tally, m.Audit
		rows = append(rows, []string{
			string(m.Strategy),
			strconv.Itoa(t.Requests),
			strconv.Itoa(t.Created),
			strconv.Itoa(t.Queued),
			strconv.Itoa(t.SoldOut),
			strconv.Itoa(t.DupRejected()),
			t.ErrorsByStatus(),
			strconv.Itoa(a.Orders),
			strconv.Itoa(a.Oversold),
			strconv.Itoa(a.DuplicateOrders),
			yesNo(a.Consistent),
			drainCell(m.Drain),
			fmt.Sprintf("%.0f", m.ReqPerSec()),
			fmt.Sprintf("%.0f", m.OrdersPerSec()),
			cpuCell(m),
			Millis(m.Metrics.Latencies.P50),
			Millis(m.Metrics.Latencies.P95),
			Millis(m.Metrics.Latencies.P99),
		})
		withSpreads(rows[len(rows)-1], m)
		if !o.Settings.Part.Whole() {
			for _, col := range []string{"orders", "oversold", "dup_orders", "consistent"} {
				rows[len(rows)-1][slices.Index(Columns, col)] = "-" // not read: PartAudit
			}
		}
	}
	return rows
}

// Millis renders a latency for the table: "3.2ms", "41.0ms", "250ms",
// "1.25s". It picks the form by the figure as it will read once rounded,
// so that 99.96 ms is "100ms", not "100.0ms", and 999.6 ms "1.00s".
func Millis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms >= 999.5:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 99.95:
		return fmt.Sprintf("%.0fms", ms)
	default:
		return fmt.Sprintf("%.1fms", ms)
	}
}

// cpuCell renders the CPU per order: "0.84ms", or "-" if unknown.
func cpuCell(m *scenario.StrategyResult) string {
	d, ok := m.CPUPerOrder()
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

// drainCell renders a queue's drain: "0.4s", "60s!" if it did not drain,
// "-" for a strategy without a queue.
func drainCell(d *tally.Drain) string {
	switch {
	case d == nil:
		return "-"
	case d.Err != "":
		return fmt.Sprintf("%.0fs!", d.Took.Seconds())
	}
	return fmt.Sprintf("%.1fs", d.Took.Seconds())
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
