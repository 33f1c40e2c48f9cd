package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A part of a crowd reads no audit: its table shows none (PartAudit and
// "-" in the audit's cells), its figures leave the audit's out, and
// --threshold skips those on the audit (Unchecked) instead of failing
// on oversell it did not count.
func TestPartShowsNoAudit(t *testing.T) {
	o := &scenario.Outcome{Settings: scenario.DefaultSettings()}
	o.Settings.Part = scenario.Part{I: 1, N: 2}
	row := counted("lua", time.Second, 100, 20, 0, nil, time.Millisecond, 2*time.Millisecond)
	o.Strategies = []*scenario.StrategyResult{row}
	ts, err := ParseThresholds([]string{"orders>=1", "p99<100ms"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Check(o, ts); len(got) != 0 {
		t.Errorf("Check of a part: %v, want no failure: the part counted no orders, loadgen merge does", got)
	}
	if got := Unchecked(o, ts); len(got) != 1 || got[0].String() != "orders>=1" {
		t.Errorf("Unchecked = %v, want orders>=1", got)
	}
	if f := NewDocument(o).Strategies[0].Figures; f["p99"] == 0 || hasKey(f, "oversold") || hasKey(f, "orders") {
		t.Errorf("a part's figures %v: want p99, and no oversold or orders", f)
	}
	var b bytes.Buffer
	if err := WriteText(&b, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), PartAudit) {
		t.Errorf("a part's table does not say %q:\n%s", PartAudit, b.String())
	}
	rows := Rows(o)
	for _, col := range []string{"orders", "oversold", "dup_orders", "consistent"} {
		if got := rows[0][indexOf(Columns, col)]; got != "-" {
			t.Errorf("a part's %s cell: %q, want -", col, got)
		}
	}
	// The whole crowd's run still checks and shows its audit.
	o.Settings.Part = scenario.Part{}
	if got := Check(o, ts); len(got) != 1 {
		t.Errorf("Check of one generator's run: %v, want orders>=1 failed", got)
	}
}

func hasKey(m map[string]float64, k string) bool { _, ok := m[k]; return ok }
