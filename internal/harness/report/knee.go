package report

import "fmt"

// kneeMs is where a sweep calls a strategy saturated: the knee of a row is
// the first offered rate at which its p99 passed kneeMs. Past it a buyer
// waits longer than a click should take. Latency, not orders/s, is the
// measure because an open crowd's requests queue: orders/s can keep up
// with the offered rate for a while after the wait has grown to seconds,
// and the goodput chart then shows where it stops keeping up. The text's
// knee lines, the charts' knee rings and the p99 chart's dashed guide all
// read this one definition.
const kneeMs = 100

// knee returns r's knee point (see kneeMs): of the points whose p99 passed
// kneeMs, the one at the lowest offered rate; ok is false if p99 stayed
// under kneeMs at every rate.
func knee(r SweepRowDoc) (p SweepPointDoc, ok bool) {
	for _, q := range r.Points {
		if q.P99Ms > kneeMs && (!ok || q.OfferedPerSecond < p.OfferedPerSecond) {
			p, ok = q, true
		}
	}
	return p, ok
}

// kneeLine says where r's knee is, or up to which rate the sweep saw none.
func kneeLine(r SweepRowDoc) string {
	if p, ok := knee(r); ok {
		return fmt.Sprintf("p99 passed %dms at %.0f/s offered (%.0f ms)", kneeMs, p.OfferedPerSecond, p.P99Ms)
	}
	if len(r.Points) == 0 {
		return "no points"
	}
	top := 0.0
	for _, q := range r.Points {
		top = max(top, q.OfferedPerSecond)
	}
	return fmt.Sprintf("p99 stayed under %dms up to %.0f/s offered", kneeMs, top)
}

// rowLines is line for every row of d, each after its strategy, the strategies
// padded so that the lines start in one column: the knee lines
// (kneeLine) and the held lines (heldLine) under a sweep's table.
func rowLines(d *SweepDoc, line func(SweepRowDoc) string) []string {
	out := make([]string, len(d.Rows))
	for i, r := range d.Rows {
		out[i] = fmt.Sprintf("%-13s %s", r.Strategy+":", line(r))
	}
	return out
}
