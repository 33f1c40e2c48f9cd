package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/scenario"
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
	Strategy string          `json:"strategy"`
	Points   []SweepPointDoc `json:"points"`
	// CeilingPerSecond is the row's ceiling at the run's RTT
	// (scenario.Strategy.Ceiling), absent without one; Hold says what the
	// hold is made of, or why there is no ceiling.
	CeilingPerSecond *float64 `json:"ceiling_per_second,omitempty"`
	Hold             string   `json:"hold"`
	// HoldsAtOnce is how many holds of the row's product can run at once
	// (scenario.Strategy.HoldsAtOnce): a point's measured hold per order h
	// allows HoldsAtOnce/h orders per second.
	HoldsAtOnce int `json:"holds_at_once,omitempty"`
	// DoorSlots is how many of the row's orders the shops let in at once
	// (scenario.Outcome.DoorSlots); 0 if unknown, unlimited, or a batched
	// row's, whose orders queue in their batch instead.
	DoorSlots int `json:"door_slots,omitempty"`
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
	// Shed counts the 503 and 429 answers: clicks turned away for load;
	// ShedP99Ms is the 99th percentile of their latency (held.go).
	Shed      int     `json:"shed"`
	ShedP99Ms float64 `json:"shed_p99_ms"`
	// MachineCPU is the busy share of the machine's cores over the
	// attack, servers included, 0..1; -1 where unknown.
	MachineCPU float64 `json:"machine_cpu"`
	// HeldMsPerOrder is how long the shops held the product's lock, or
	// its hot row, per order written: the holds' total length over the
	// orders (tally.Events.HeldUs, Audit.Orders); 0 where nothing was
	// measured.
	HeldMsPerOrder float64 `json:"held_ms_per_order,omitempty"`
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
		for _, m := range p.Strategies {
			i, ok := at[string(m.Strategy)]
			if !ok {
				i = len(d.Rows)
				at[string(m.Strategy)] = i
				d.Rows = append(d.Rows, newSweepRowDoc(o, m.Strategy))
			}
			shedN, shedP99 := shedFigures(m)
			d.Rows[i].Points = append(d.Rows[i].Points, SweepPointDoc{
				OfferedPerSecond: perSecond(p.Rate), ReqPerSecond: m.ReqPerSec(), OrdersPerSecond: m.OrdersPerSec(),
				AnsweredPerSecond: answeredPerSec(m), Requests: m.Tally.Requests, Errors: m.Tally.ErrorCount(),
				Oversold: m.Audit.Oversold, P50Ms: ms(m.Metrics.Latencies.P50), P99Ms: ms(m.Metrics.Latencies.P99),
				Shed: shedN, ShedP99Ms: ms(shedP99), MachineCPU: m.Machine, HeldMsPerOrder: heldPerOrder(m),
			})
		}
	}
	return d
}

// heldPerOrder is m's hold per order written in ms, 0 without holds or
// orders.
func heldPerOrder(m *scenario.StrategyResult) float64 {
	if m.Events.Holds == 0 || m.Audit.Orders == 0 {
		return 0
	}
	return float64(m.Events.HeldUs) / 1000 / float64(m.Audit.Orders)
}

// SweepColumns are the sweep table's headers.
var SweepColumns = []string{"strategy", "offered", "req/s", "orders/s", "answered/s", "errors", "oversold", "p50", "p99", "shed", "shed p99", "cpu"}

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
				r.Strategy, fmt.Sprintf("%.0f/s", p.OfferedPerSecond), fmt.Sprintf("%.0f", p.ReqPerSecond),
				fmt.Sprintf("%.0f", p.OrdersPerSecond), fmt.Sprintf("%.0f", p.AnsweredPerSecond),
				strconv.Itoa(p.Errors), strconv.Itoa(p.Oversold),
				Millis(time.Duration(p.P50Ms * float64(time.Millisecond))), Millis(time.Duration(p.P99Ms * float64(time.Millisecond))),
				strconv.Itoa(p.Shed), shedP99Cell(p), machineCell(p),
			})
		}
	}
	return rows
}

// writeSweepText writes the sweep table, aligned, a blank line between
// rows, then each row's knee line and each row's held line, passed
// through fit.
func writeSweepText(b *strings.Builder, o *scenario.Outcome, fit func(string) string) {
	writeAligned(b, SweepColumns, SweepRows(o), true)
	d := newSweepDoc(o)
	for _, line := range []func(SweepRowDoc) string{kneeLine, heldLine, ceilingLine} {
		b.WriteString("\n")
		for _, l := range rowLines(d, line) {
			b.WriteString(fit(l) + "\n")
		}
	}
}
