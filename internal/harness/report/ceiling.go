package report

import (
	"fmt"
	"strings"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A row's ceiling is what its hold allows at the run's RTT (the round
// trips its strategy holds its product for: strategy.Hold). ceilingLine
// sets the measured peak beside it, and when the peak falls short of
// ceilingShare of it, says from the points what else held the row back.
// Where the shops timed the hold (HeldMsPerOrder), the line sets the
// measured hold per order beside the counted one, and the peak beside
// what the measured hold allows: a peak near that is limited by the hold
// itself, longer than its round trips; a peak below it left the product
// free between holds (the handoff), or was held back by the cores, errors,
// the rate offered or the load generator.

// ceilingShare is the share of its ceiling a row's peak should reach.
const ceilingShare = 0.8

// busyCPU is a machine busy enough to be what limits a row.
const busyCPU = 0.9

// newSweepRowDoc is strategy's row of o's sweep, its points still to add.
// The ceiling counts SQLite's one write lock when the run's database is
// the embedded SQLite.
func newSweepRowDoc(o *scenario.Outcome, strategy scenario.Strategy) SweepRowDoc {
	sqlite := strings.Contains(o.Backend, "SQLite")
	r := SweepRowDoc{Strategy: string(strategy), HoldsAtOnce: strategy.HoldsAtOnce(o.Settings, sqlite)}
	if !strategy.Batched() {
		r.DoorSlots = o.DoorSlots
	}
	c, why, ok := strategy.Ceiling(o.Settings, sqlite)
	r.Hold = why
	if ok {
		r.CeilingPerSecond = &c
	}
	return r
}

// ceilingLine says r's ceiling, its peak and their ratio, and what else
// limited a peak below ceilingShare of it, e.g. "ceiling 62/s (1 redis +
// 6 db trips + work), peak 58/s: 0.93×".
func ceilingLine(r SweepRowDoc) string {
	if r.CeilingPerSecond == nil {
		return "ceiling -: " + r.Hold
	}
	c := *r.CeilingPerSecond
	peak, ok := peakPoint(r)
	if !ok {
		return fmt.Sprintf("ceiling %.0f/s (%s), no points", c, r.Hold)
	}
	ratio := peak.OrdersPerSecond / c
	line := fmt.Sprintf("ceiling %.0f/s (%s), peak %.0f/s: %.2f×", c, r.Hold, peak.OrdersPerSecond, ratio)
	if ratio >= ceilingShare {
		return line
	}
	why := limits(r, c)
	if peak.HeldMsPerOrder <= 0 || r.HoldsAtOnce <= 0 {
		if len(why) == 0 {
			why = []string{"nothing these points show (" + nothingShown(r) + "): a cost the hold's round trips leave out, such as the handoff from one holder to the next"}
		}
		return line + "; limited by " + strings.Join(why, ", ")
	}
	line += "; " + heldClause(r, c, peak)
	busy := peak.OrdersPerSecond * peak.HeldMsPerOrder / 1000 / float64(r.HoldsAtOnce) // = the peak / what the hold allows
	if busy >= ceilingShare {
		if len(why) > 0 {
			line += "; the points also show " + strings.Join(why, ", ")
		}
		return line
	}
	if w, ok := soldAll(r, peak); ok {
		why = append([]string{w}, why...)
	}
	if len(why) == 0 {
		why = []string{fmt.Sprintf("the handoff: the product stood free %.0f%% of the time between one hold and the next, "+
			"and nothing else these points show (%s)", 100*(1-busy), nothingShown(r))}
	}
	return line + "; limited by " + strings.Join(why, ", ")
}

// soldAll says, when r's peak sold nearly every click offered at its
// rate, that the rate offered there limited it, and what the next rate
// sold: the product stood free because nobody asked, and asking more
// sold less.
func soldAll(r SweepRowDoc, peak SweepPointDoc) (string, bool) {
	if peak.OrdersPerSecond < 0.95*peak.OfferedPerSecond {
		return "", false
	}
	w := fmt.Sprintf("the rate offered at the peak (%.0f/s, nearly every click sold)", peak.OfferedPerSecond)
	for i, p := range r.Points {
		if p.OfferedPerSecond == peak.OfferedPerSecond && i+1 < len(r.Points) {
			next := r.Points[i+1]
			w += fmt.Sprintf(", and at %.0f/s it sold %.0f/s, held %.1f ms per order", next.OfferedPerSecond, next.OrdersPerSecond, next.HeldMsPerOrder)
			break
		}
	}
	return w, true
}

// heldClause sets peak's measured hold per order beside the round trips
// (and work) r's ceiling c counts, and the peak beside what the measured
// hold allows, e.g. "held 24.1 ms per order against 16.0 ms of round
// trips and work: peak 41/s is 0.99× the 41/s that hold allows; the 8.1
// ms more are the servers' and the shop's own time inside the hold".
func heldClause(r SweepRowDoc, c float64, peak SweepPointDoc) string {
	at := float64(r.HoldsAtOnce)
	counted := 1000 * at / c // ms per order: c = at / counted
	allows := 1000 * at / peak.HeldMsPerOrder
	of := "round trips"
	if strings.Contains(r.Hold, "work") {
		of += " and work"
	}
	out := fmt.Sprintf("held %.1f ms per order against %.1f ms of %s: peak %.0f/s is %.2f× the %.0f/s that hold allows",
		peak.HeldMsPerOrder, counted, of, peak.OrdersPerSecond, peak.OrdersPerSecond/allows, allows)
	if more := peak.HeldMsPerOrder - counted; more >= 0.05*counted {
		out += fmt.Sprintf("; the %.1f ms more are the servers' and the shop's own time inside the hold", more)
	}
	return out
}

// nothingShown says that r's points show none of limits' causes: "CPU
// at most 61%, every click sent, no errors".
func nothingShown(r SweepRowDoc) string {
	busiest := 0.0
	for _, p := range r.Points {
		busiest = max(busiest, p.MachineCPU)
	}
	return fmt.Sprintf("CPU at most %.0f%%, every click sent, no errors", 100*busiest)
}

// peakPoint is r's point of most orders per second.
func peakPoint(r SweepRowDoc) (SweepPointDoc, bool) {
	if len(r.Points) == 0 {
		return SweepPointDoc{}, false
	}
	peak := r.Points[0]
	for _, p := range r.Points {
		if p.OrdersPerSecond > peak.OrdersPerSecond {
			peak = p
		}
	}
	return peak, true
}

// limits says what held r below its ceiling c, from its points; nothing
// if they show no cause.
func limits(r SweepRowDoc, c float64) []string {
	var why []string
	top := 0.0
	for _, p := range r.Points {
		top = max(top, p.OfferedPerSecond)
	}
	if top < ceilingShare*c {
		why = append(why, fmt.Sprintf("the offered rate (the sweep's top, %.0f/s, is below %.1f× the ceiling)", top, ceilingShare))
	}
	if w, ok := door(r); ok {
		why = append(why, w)
	}
	for _, p := range r.Points {
		at := fmt.Sprintf("at %.0f/s", p.OfferedPerSecond)
		switch {
		case p.MachineCPU >= busyCPU:
			why = append(why, fmt.Sprintf("the cores (%s busy %s)", machineCell(p), at))
		case p.Errors > p.Shed: // shed (503, 429) is the shop's answer to a full queue, not a cause
			why = append(why, fmt.Sprintf("errors (%d %s)", p.Errors-p.Shed, at))
		case p.ReqPerSecond < 0.9*p.OfferedPerSecond:
			why = append(why, fmt.Sprintf("the load generator (%.0f req/s sent %s)", p.ReqPerSecond, at))
		}
	}
	return why
}

// door says, when r's peak came near what the shops' door lets through,
// that it did. The shops work on DoorSlots orders at once, so they pass
// at most DoorSlots / t orders per second, t being an order's time once
// let in (Little's law), read as the p50 of r's least loaded point, where
// nobody queued: on a network t grows with the round trips, so a door
// sized on loopback caps a row whose hot row would allow more.
func door(r SweepRowDoc) (string, bool) {
	peak, ok := peakPoint(r)
	if !ok || r.DoorSlots <= 0 {
		return "", false
	}
	first := r.Points[0]
	for _, p := range r.Points {
		if p.OfferedPerSecond < first.OfferedPerSecond {
			first = p
		}
	}
	if first.P50Ms <= 0 {
		return "", false
	}
	allows := float64(r.DoorSlots) * 1000 / first.P50Ms
	if peak.OrdersPerSecond < ceilingShare*allows {
		return "", false
	}
	return fmt.Sprintf("the shops' door (%d orders in flight at once across the shops, --max-in-flight; "+
		"%.1f ms each at %.0f/s, p50: at most %.0f/s let through)", r.DoorSlots, first.P50Ms, first.OfferedPerSecond, allows), true
}

// machineCell is p's machine CPU share for a table, "?" where unknown.
func machineCell(p SweepPointDoc) string {
	if p.MachineCPU < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f%%", 100*p.MachineCPU)
}
