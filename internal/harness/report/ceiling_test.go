package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/netsim"
)

// A row below 0.8× its ceiling whose hold the shops timed: the line sets
// the measured hold per order beside the counted one, and the peak
// beside what the measured hold allows; a peak near that is the hold's
// own, one below it left the product free between holds.
func TestCeilingLineHeld(t *testing.T) {
	ceiling := func(c float64) *float64 { return &c }
	point := func(offered, orders, cpu, held float64) SweepPointDoc {
		return SweepPointDoc{OfferedPerSecond: offered, ReqPerSecond: offered, OrdersPerSecond: orders,
			MachineCPU: cpu, HeldMsPerOrder: held}
	}
	for _, tc := range []struct {
		name string
		row  SweepRowDoc
		want string
	}{
		{"held longer than its round trips", SweepRowDoc{
			Strategy: "lua", CeilingPerSecond: ceiling(62.5), Hold: "1 redis + 6 db trips + work", HoldsAtOnce: 1,
			Points: []SweepPointDoc{point(50, 40, 0.5, 23), point(100, 41, 0.6, 24.1)}},
			"ceiling 62/s (1 redis + 6 db trips + work), peak 41/s: 0.66×; held 24.1 ms per order against 16.0 ms " +
				"of round trips and work: peak 41/s is 0.99× the 41/s that hold allows; " +
				"the 8.1 ms more are the servers' and the shop's own time inside the hold"},
		{"the product stood free between holds", SweepRowDoc{
			Strategy: "sql-atomic", CeilingPerSecond: ceiling(500), Hold: "1 db trips", HoldsAtOnce: 1,
			Points: []SweepPointDoc{point(400, 350, 0.61, 2.0), point(800, 383, 0.55, 2.0)}},
			"ceiling 500/s (1 db trips), peak 383/s: 0.77×; held 2.0 ms per order against 2.0 ms of round trips: " +
				"peak 383/s is 0.77× the 500/s that hold allows; limited by the handoff: the product stood free 23% " +
				"of the time between one hold and the next, and nothing else these points show " +
				"(CPU at most 61%, every click sent, no errors)"},
		{"four rows at once, the cores busy", SweepRowDoc{
			Strategy: "sql-atomic+k4", CeilingPerSecond: ceiling(2000), Hold: "1 db trips, 4 buckets", HoldsAtOnce: 4,
			Points: []SweepPointDoc{point(800, 790, 0.8, 2.2), point(1600, 1060, 0.97, 3.1)}},
			"ceiling 2000/s (1 db trips, 4 buckets), peak 1060/s: 0.53×; held 3.1 ms per order against 2.0 ms of " +
				"round trips: peak 1060/s is 0.82× the 1290/s that hold allows; the 1.1 ms more are the servers' and " +
				"the shop's own time inside the hold; the points also show the cores (97% busy at 1600/s)"},
		{"every click sold at the peak, fewer past it", SweepRowDoc{
			Strategy: "sql-version", CeilingPerSecond: ceiling(83), Hold: "5 db trips + work", HoldsAtOnce: 1,
			Points: []SweepPointDoc{point(50, 50, 0.07, 14.8), point(100, 15, 0.07, 43.4)}},
			"ceiling 83/s (5 db trips + work), peak 50/s: 0.60×; held 14.8 ms per order against 12.0 ms of round " +
				"trips and work: peak 50/s is 0.74× the 68/s that hold allows; the 2.8 ms more are the servers' and " +
				"the shop's own time inside the hold; limited by the rate offered at the peak (50/s, nearly every " +
				"click sold), and at 100/s it sold 15/s, held 43.4 ms per order"},
		{"no hold timed", SweepRowDoc{
			Strategy: "sql-atomic", CeilingPerSecond: ceiling(500), Hold: "1 db trips", HoldsAtOnce: 1,
			Points: []SweepPointDoc{point(400, 383, 0.61, 0)}},
			"ceiling 500/s (1 db trips), peak 383/s: 0.77×; limited by nothing these points show " +
				"(CPU at most 61%, every click sent, no errors): a cost the hold's round trips leave out, " +
				"such as the handoff from one holder to the next"},
		{"sixteen rows, the shops' door full", SweepRowDoc{
			Strategy: "sql-atomic+k16", CeilingPerSecond: ceiling(8000), Hold: "1 db trips, 16 buckets", HoldsAtOnce: 16, DoorSlots: 24,
			Points: []SweepPointDoc{
				{OfferedPerSecond: 400, ReqPerSecond: 400, OrdersPerSecond: 399, MachineCPU: 0.3, HeldMsPerOrder: 2.7, P50Ms: 12.1},
				{OfferedPerSecond: 3200, ReqPerSecond: 3200, OrdersPerSecond: 1608, MachineCPU: 0.79, HeldMsPerOrder: 2.7, P50Ms: 289}}},
			"ceiling 8000/s (1 db trips, 16 buckets), peak 1608/s: 0.20×; held 2.7 ms per order against 2.0 ms of " +
				"round trips: peak 1608/s is 0.27× the 5926/s that hold allows; the 0.7 ms more are the servers' and " +
				"the shop's own time inside the hold; limited by the offered rate (the sweep's top, 3200/s, is below " +
				"0.8× the ceiling), the shops' door (24 orders in flight at once across " +
				"the shops, --max-in-flight; 12.1 ms each at 400/s, p50: at most 1983/s let through)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ceilingLine(tc.row); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A sweep's point carries the shops' hold per order written, from the
// row's events and audit; a row carries how many holds run at once: one
// per bucket on MySQL, one on SQLite's single write lock.
func TestSweepHeldPerOrder(t *testing.T) {
	o := countedSweep()
	rtt, err := netsim.ParseRTT("2ms")
	if err != nil {
		t.Fatal(err)
	}
	o.Settings.RTT, o.Settings.Buckets, o.Backend = rtt, 4, "MySQL"
	m := o.Sweep[0].Strategies[1] // sql-atomic at 250/s
	m.Events = tally.Events{Holds: 520, HeldUs: 1100000}
	m.Audit.Orders = 500
	d := newSweepDoc(o)
	if got, want := d.Rows[1].Points[0].HeldMsPerOrder, 2.2; got != want {
		t.Errorf("held per order: got %v ms, want %v", got, want)
	}
	if got := d.Rows[1].Points[1].HeldMsPerOrder; got != 0 {
		t.Errorf("a point without holds: got %v ms, want 0", got)
	}
	if got, want := d.Rows[1].HoldsAtOnce, 4; got != want {
		t.Errorf("sql-atomic in 4 buckets on MySQL: %d holds at once, want %d", got, want)
	}
	if got, want := d.Rows[0].HoldsAtOnce, 1; got != want {
		t.Errorf("lua: %d holds at once, want %d", got, want)
	}
	o.Backend = "embedded SQLite"
	if got, want := newSweepDoc(o).Rows[1].HoldsAtOnce, 1; got != want {
		t.Errorf("sql-atomic in 4 buckets on SQLite: %d holds at once, want %d", got, want)
	}
	o.Backend = "MySQL"
	doc, err := json.Marshal(NewDocument(o))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"held_ms_per_order":2.2`) {
		t.Errorf("report.json's point lacks held_ms_per_order:\n%s", doc)
	}
}
