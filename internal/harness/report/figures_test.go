package report

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// counted is a row whose figures are set, not counted from results:
// requests sent over elapsed (Vegeta's rate is their quotient), created
// 201s, queued 202s, errs by "status code" (counted by status too), the
// p50 and p99.
func counted(strategy scenario.Strategy, elapsed time.Duration, requests, created, queued int, errs map[string]int, p50, p99 time.Duration) *scenario.StrategyResult {
	m := &scenario.StrategyResult{Strategy: strategy, CPU: -1,
		Tally: tally.Answers{Requests: requests, Created: created, Queued: queued, Errors: errs, Status: map[int]int{}}}
	for key, n := range errs {
		status, _, _ := strings.Cut(key, " ")
		code, _ := strconv.Atoi(status)
		m.Tally.Status[code] += n
	}
	m.Metrics.Duration, m.Metrics.Requests = elapsed, uint64(requests)
	if elapsed > 0 {
		m.Metrics.Rate = float64(requests) / elapsed.Seconds()
	}
	m.Metrics.Latencies = vegeta.LatencyMetrics{P50: p50, P95: (p50 + p99) / 2, P99: p99, Max: 2 * p99}
	return m
}

// Goodput counts the answers a buyer can act on, per second of attack:
// orders (201, 202) and the expected 409s, never 503s or timeouts.
func TestGoodput(t *testing.T) {
	for _, tc := range []struct {
		name             string
		m                *scenario.StrategyResult
		orders, answered float64
	}{
		{"every click answered", counted("lua", 2*time.Second, 1000, 100, 0, nil, 0, 0), 50, 500},
		{"503s are not answers", counted("lua", 2*time.Second, 1000, 100, 0, map[string]int{"503 busy": 300, "503 lock_timeout": 100}, 0, 0), 50, 300},
		{"a timeout is not an answer", counted("lua", 4*time.Second, 1000, 0, 0, map[string]int{"0 timeout": 1000}, 0, 0), 0, 0},
		{"202s are orders", counted("redis-queue", time.Second, 400, 0, 300, nil, 0, 0), 300, 400},
		{"201s and 202s add up", counted("redis-queue", 500*time.Millisecond, 400, 100, 100, nil, 0, 0), 400, 800},
		{"no attack, no division by zero", counted("lua", 0, 0, 0, 0, nil, 0, 0), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.OrdersPerSec(); got != tc.orders {
				t.Errorf("orders/s: got %v, want %v", got, tc.orders)
			}
			if got := answeredPerSec(tc.m); got != tc.answered {
				t.Errorf("answered/s: got %v, want %v", got, tc.answered)
			}
		})
	}
	// The attack lasts until its last answer: Vegeta's wait counts.
	m := counted("lua", time.Second, 300, 0, 0, nil, 0, 0)
	m.Metrics.Wait = 500 * time.Millisecond
	if got, want := answeredPerSec(m), 200.0; got != want {
		t.Errorf("answered/s with 0.5 s of wait after 1 s of sending: got %v, want %v", got, want)
	}
}

// Every figure of a row, by the name --threshold and compare use.
func TestFigureValues(t *testing.T) {
	m := counted("lua", 2*time.Second, 1000, 80, 20, map[string]int{"503 busy": 90, "0 timeout": 10}, 3*time.Millisecond, 250*time.Millisecond)
	m.Tally.SoldOut, m.Tally.DuplicateRequests, m.Tally.DuplicateOrders = 700, 60, 40
	m.Audit = tally.Audit{Orders: 101, Oversold: 1, DuplicateOrders: 2}
	want := map[string]float64{
		"reqs": 1000, "201": 80, "sold_out": 700, "dup_rejected": 100, "errors": 100, "503s": 90,
		"orders": 101, "oversold": 1, "dup_orders": 2, "req/s": 500, "orders/s": 50, "answered/s": 450,
		"p50": 3, "p95": 126.5, "p99": 250, "max": 500,
	}
	got := figureValues(&scenario.Outcome{}, m)
	if !maps.Equal(got, want) {
		t.Errorf("figures:\n got %v\nwant %v", got, want)
	}
	if got, want := ThresholdMetrics(), []string{"reqs", "201", "sold_out", "dup_rejected", "errors", "503s", "orders",
		"oversold", "dup_orders", "req/s", "orders/s", "answered/s", "p50", "p95", "p99", "max"}; !slices.Equal(got, want) {
		t.Errorf("ThresholdMetrics: got %v, want %v", got, want)
	}
	if _, ok := FigureNamed("speed"); ok {
		t.Errorf(`FigureNamed("speed"): found, want no such figure`)
	}
}

// A --count row's figure is the median of its runs, with min and max.
func TestSpreadOf(t *testing.T) {
	orders, _ := FigureNamed("orders")
	for _, tc := range []struct {
		name   string
		orders []int
		want   Spread
		cell   string
	}{
		{"one run", []int{7}, Spread{7, 7, 7}, "7"},
		{"odd count, unsorted", []int{12, 10, 30}, Spread{12, 10, 30}, "12 (10–30)"},
		{"even count: the mean of the middle two", []int{40, 10, 20, 30}, Spread{25, 10, 40}, "25 (10–40)"},
		{"a half in the middle", []int{10, 11}, Spread{10.5, 10, 11}, "10.5 (10–11)"},
		{"every run agreed", []int{5, 5, 5}, Spread{5, 5, 5}, "5"},
		{"no runs", nil, Spread{}, "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs []*scenario.StrategyResult
			for _, n := range tc.orders {
				runs = append(runs, &scenario.StrategyResult{Audit: tally.Audit{Orders: n}})
			}
			if got := spreadOf(orders, runs); got != tc.want {
				t.Errorf("spreadOf: got %+v, want %+v", got, tc.want)
			}
			if got := spreadCell(orders, runs); got != tc.cell {
				t.Errorf("spreadCell: got %q, want %q", got, tc.cell)
			}
		})
	}
	// Runs that differ below what the table writes read as one figure.
	for _, tc := range []struct {
		figure string
		values []time.Duration // latencies, or elapsed seconds for 500 requests
		want   string
	}{
		{"p99", []time.Duration{300 * time.Microsecond, 320 * time.Microsecond}, "0.3ms"},
		{"p99", []time.Duration{3100 * time.Microsecond, 3200 * time.Microsecond}, "3.1ms (3.1ms–3.2ms)"},
		{"req/s", []time.Duration{2 * time.Second, 1999 * time.Millisecond}, "250"},
		{"req/s", []time.Duration{2 * time.Second, 1900 * time.Millisecond}, "257 (250–263)"},
	} {
		var runs []*scenario.StrategyResult
		for _, v := range tc.values {
			m := counted("lua", v, 500, 0, 0, nil, 0, v)
			runs = append(runs, m)
		}
		f, _ := FigureNamed(tc.figure)
		if got := spreadCell(f, runs); got != tc.want {
			t.Errorf("spreadCell(%s of %v): got %q, want %q", tc.figure, tc.values, got, tc.want)
		}
	}
}

// A figure is written as the table writes it: latencies as Millis, rates
// whole, counts whole unless a median made a half.
func TestFormatFigure(t *testing.T) {
	for _, tc := range []struct {
		figure string
		v      float64
		want   string
	}{
		{"p99", 0.25, "0.2ms"},
		{"p99", 41.04, "41.0ms"},
		{"p99", 99.94, "99.9ms"},
		{"p99", 99.96, "100ms"},
		{"p99", 100, "100ms"},
		{"p99", 999.4, "999ms"},
		{"p99", 999.6, "1.00s"},
		{"p99", 1000, "1.00s"},
		{"p50", 12_345, "12.35s"},
		{"orders/s", 49.5, "50"},
		{"orders/s", 0.4, "0"},
		{"req/s", 1234.56, "1235"},
		{"orders", 100, "100"},
		{"orders", 100.5, "100.5"},
		{"errors", 0, "0"},
	} {
		f, _ := FigureNamed(tc.figure)
		if got := formatFigure(f, tc.v); got != tc.want {
			t.Errorf("formatFigure(%s, %v) = %q, want %q", tc.figure, tc.v, got, tc.want)
		}
	}
}
