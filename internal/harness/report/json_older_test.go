package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReadsAnOlderDocument: a report.json written before a strategy was
// called one (its rows under "modes", each named by "mode") reads as a
// new one does, so loadgen merge and compare still read older runs.
func TestReadsAnOlderDocument(t *testing.T) {
	const older = `{
		"settings": {"modes": ["lua", "fenced+batch"], "users": 10},
		"modes": [{"mode": "lua", "sent_requests": 7}, {"mode": "fenced+batch"}],
		"skipped": [{"mode": "zookeeper", "why": "no ensemble"}],
		"thresholds": {"given": ["oversold==0"], "failed": [{"mode": "lua", "threshold": "oversold==0"}]},
		"sweep": {"rows": [{"mode": "lua", "points": []}]}
	}`
	var d Document
	if err := json.Unmarshal([]byte(older), &d); err != nil {
		t.Fatal(err)
	}
	if got := d.Settings.Strategies; len(got) != 2 || got[0] != "lua" || got[1] != "fenced+batch" || d.Settings.Users != 10 {
		t.Errorf("settings: got strategies %q, users %d; want [lua fenced+batch], 10", got, d.Settings.Users)
	}
	if len(d.Strategies) != 2 || d.Strategies[0].Strategy != "lua" || d.Strategies[0].Sent != 7 || d.Strategies[1].Strategy != "fenced+batch" {
		t.Errorf("rows: got %+v; want lua (7 sent), fenced+batch", d.Strategies)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].Strategy != "zookeeper" || d.Skipped[0].Why != "no ensemble" {
		t.Errorf("skipped: got %+v; want zookeeper, no ensemble", d.Skipped)
	}
	if d.Thresholds == nil || len(d.Thresholds.Failed) != 1 || d.Thresholds.Failed[0].Strategy != "lua" {
		t.Errorf("thresholds: got %+v; want lua failed", d.Thresholds)
	}
	if d.Sweep == nil || len(d.Sweep.Rows) != 1 || d.Sweep.Rows[0].Strategy != "lua" {
		t.Errorf("sweep: got %+v; want a lua row", d.Sweep)
	}

	// Written again, it says strategy only; read back, it is the same.
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, `"mode"`) || strings.Contains(s, `"modes"`) {
		t.Errorf("written: %s; want no \"mode\" or \"modes\" key", s)
	}
	var again Document
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if len(again.Strategies) != 2 || again.Strategies[0].Strategy != "lua" || again.Settings.Strategies[1] != "fenced+batch" {
		t.Errorf("read back: got rows %+v, settings %q", again.Strategies, again.Settings.Strategies)
	}
}
