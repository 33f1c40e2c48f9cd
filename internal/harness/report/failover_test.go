package report

import (
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
)

// A row's failover rounds reach report.json with units and totals; a
// second grant that could not be watched (-1) is left out, not written
// as zero, and sales that never resumed read -1.
func TestFailoverInReportJSON(t *testing.T) {
	o := outcome()
	o.Settings.Faults = []fault.Fault{&fault.SentinelFailover{Enabled: true, Rounds: 2}}
	o.Strategies[1].Events.FencedOut = 3
	o.Strategies[1].Records = fault.Records{&fault.Failover{Planned: 2, Rounds: []fault.FailoverRound{
		{At: time.Second, Promoted: 1500 * time.Millisecond, Held: 30 * time.Millisecond, Behind: 500, Caught: true, GrantedTwice: 1, Resumed: 2 * time.Second},
		{At: 6 * time.Second, Promoted: 1800 * time.Millisecond, Held: 20 * time.Millisecond, Behind: 300, GrantedTwice: -1, Resumed: -1},
	}}}
	doc := NewDocument(o)
	if doc.Strategies[0].Failover != nil {
		t.Errorf("off row: failover %+v, want none", doc.Strategies[0].Failover)
	}
	f := doc.Strategies[1].Failover
	if f == nil || f.Planned != 2 || f.Done != 2 || f.FencedOut != 3 || f.PromotedMaxMs != 1800 || f.ResumedMaxSeconds != -1 ||
		f.GrantedTwice == nil || *f.GrantedTwice != 1 || len(f.Rounds) != 2 {
		t.Fatalf("failover %+v, want 2 of 2 rounds, fenced out 3, promoted ≤1800 ms, resumed -1, granted twice 1", f)
	}
	if r := f.Rounds[1]; r.GrantedTwice != nil || r.ResumedSeconds != -1 || r.BehindBytes != 300 || r.HeldMs != 20 {
		t.Errorf("second round %+v, want granted twice left out, resumed -1, 300 bytes behind, held 20 ms", r)
	}
	if f.Drift != nil || f.Rounds[0].PhantomUnits != nil {
		t.Errorf("fenced row: drift %+v, phantom units %v; want none", f.Drift, f.Rounds[0].PhantomUnits)
	}
	if doc.Settings.Faults["failovers"] != "2" || !strings.Contains(settingsLine(o), "--failover --failovers 2") {
		t.Errorf("settings %+v, line %q: want the failovers", doc.Settings, settingsLine(o))
	}
}

// Redis-decr's drift reaches report.json: its peak, the seconds from the
// last kill until it was repaired (-1 if it never was), its end, and the
// phantom units of each round's promoted counter.
func TestFailoverDriftInReportJSON(t *testing.T) {
	o := outcome()
	o.Settings.Faults = []fault.Fault{&fault.SentinelFailover{Enabled: true, Rounds: 2}}
	o.Strategies[1].Records = fault.Records{&fault.Failover{Planned: 2, Rounds: []fault.FailoverRound{
		{At: 3 * time.Second, Caught: true, GrantedTwice: -1, Phantom: 3},
		{At: 8 * time.Second, GrantedTwice: -1, Phantom: 0},
	}, Drift: &fault.FailoverDrift{Peak: 3, Repaired: 3500 * time.Millisecond, End: 0, Samples: 140}}}
	o.Strategies[0].Records = fault.Records{&fault.Failover{Planned: 2, Drift: &fault.FailoverDrift{Peak: 2, Repaired: -1, End: 2, Samples: 9}}}
	doc := NewDocument(o)
	d := doc.Strategies[1].Failover.Drift
	if d == nil || *d != (FailoverDriftDoc{PeakUnits: 3, RepairedSeconds: 3.5, EndUnits: 0, Samples: 140}) {
		t.Errorf("drift %+v, want peak 3, repaired 3.5 s, end 0, 140 samples", d)
	}
	if r := doc.Strategies[1].Failover.Rounds; r[0].PhantomUnits == nil || *r[0].PhantomUnits != 3 || r[1].PhantomUnits == nil || *r[1].PhantomUnits != 0 {
		t.Errorf("rounds %+v, want 3 then 0 phantom units", r)
	}
	if d := doc.Strategies[0].Failover.Drift; d == nil || d.RepairedSeconds != -1 || d.EndUnits != 2 {
		t.Errorf("unrepaired drift %+v, want repaired -1, end 2", d)
	}
}
