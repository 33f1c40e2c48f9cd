package report

import (
	"fmt"
	"strings"

	"github.com/flashsale/flashsale/internal/scenario"
)

// A row's ceiling is what its hold allows at the run's RTT (the round
// trips its strategy holds its product for: strategy.Hold). ceilingLine
// sets the measured peak beside it, and when the peak falls short of
// ceilingShare of it, says from the points what else held the row back:
// a rate that never asked for more, the cores, errors, or the load
// generator sending less than asked; else that none of these did.

// ceilingShare is the share of its ceiling a row's peak should reach.
const ceilingShare = 0.8

// busyCPU is a machine busy enough to be what limits a row.
const busyCPU = 0.9

// newSweepRowDoc is mode's row of o's sweep, its points still to add.
// The ceiling counts SQLite's one write lock when the run's database is
// the embedded SQLite.
func newSweepRowDoc(o *scenario.Outcome, mode scenario.Mode) SweepRowDoc {
	r := SweepRowDoc{Mode: string(mode)}
	c, why, ok := mode.Ceiling(o.Settings, strings.Contains(o.Backend, "SQLite"))
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
	return line + "; limited by " + strings.Join(limits(r, c), ", ")
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

// limits says what held r below its ceiling c, from its points.
func limits(r SweepRowDoc, c float64) []string {
	var why []string
	top := 0.0
	for _, p := range r.Points {
		top = max(top, p.OfferedPerSecond)
	}
	if top < ceilingShare*c {
		why = append(why, fmt.Sprintf("the offered rate (the sweep's top, %.0f/s, is below %.1f× the ceiling)", top, ceilingShare))
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
	if len(why) == 0 {
		busiest := 0.0
		for _, p := range r.Points {
			busiest = max(busiest, p.MachineCPU)
		}
		return []string{fmt.Sprintf("nothing these points show (CPU at most %.0f%%, every click sent, no errors): "+
			"a cost the hold's round trips leave out, such as the handoff from one holder to the next", 100*busiest)}
	}
	return why
}

// machineCell is p's machine CPU share for a table, "?" where unknown.
func machineCell(p SweepPointDoc) string {
	if p.MachineCPU < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f%%", 100*p.MachineCPU)
}
