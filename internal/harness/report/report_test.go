package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// outcome makes a small outcome by hand: one unsafe-looking off row, one
// clean lua row with a node kill, each with a few raw results.
func outcome() *scenario.Outcome {
	start := time.Date(2025, 11, 11, 0, 0, 0, 0, time.UTC)
	s := scenario.DefaultSettings()
	s.Strategies = []scenario.Strategy{scenario.Strategy(strategy.Off), scenario.Strategy(strategy.Redlock)}
	o := &scenario.Outcome{Settings: s, Env: scenario.CurrentEnv(), Targets: []string{"http://127.0.0.1:1"},
		Backend: "test", Started: start, Wall: 3 * time.Second}
	for i, row := range s.Strategies {
		m := &scenario.StrategyResult{Strategy: row, ProductID: "p-" + string(row), Planned: 4, Sent: 4,
			Audit: tally.Audit{InitialStock: 1, Orders: 2 - i, Sold: 2 - i, Oversold: 1 - i, DuplicateOrders: i, Consistent: i == 1},
			Why:   "because <b>" + string(row) + "</b>"}
		for j, code := range []uint16{201, 409, 503, 201} {
			body := `{"error":{"code":"sold_out"}}`
			if code == 503 {
				body = `{"error":{"code":"lock_timeout"}}`
			}
			r := vegeta.Result{Attack: string(row), Seq: uint64(j), Code: code, Body: []byte(body),
				Timestamp: start.Add(time.Duration(j) * 100 * time.Millisecond), Latency: time.Duration(j+1) * time.Millisecond}
			m.Tally.Add(&r)
			m.Metrics.Add(&r)
			m.Results = append(m.Results, r)
		}
		m.Metrics.Close()
		if row.Name() == strategy.Redlock {
			m.Records = fault.Records{&fault.Kill{Nodes: []int{0, 1}, At: 150 * time.Millisecond}}
		}
		o.Strategies = append(o.Strategies, m)
	}
	return o
}

func TestWriteCreatesEveryFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	o := outcome()
	if err := Write(dir, o); err != nil {
		t.Fatalf("Write: %v", err)
	}
	for _, name := range []string{JSONFile, MarkdownFile, HTMLFile, RawFile("off"), RawFile("redlock")} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v, want a non-empty file", name, err)
		}
	}

	b, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("report.json does not parse: %v", err)
	}
	if got, want := len(doc.Strategies), 2; got != want {
		t.Fatalf("report.json strategies: got %d, want %d", got, want)
	}
	if got, want := doc.Strategies[0].Audit.Oversold, 1; got != want {
		t.Errorf("off oversold in report.json: got %d, want %d", got, want)
	}
	if doc.Env.NumCPU < 1 || doc.Env.GoVersion == "" || doc.Settings.Users != o.Settings.Users {
		t.Errorf("report.json env/settings incomplete: %+v %+v", doc.Env, doc.Settings)
	}
	if got, want := doc.Strategies[1].Kill.Nodes, []int{1, 2}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("kill nodes in report.json: got %v, want %v (numbered from 1)", got, want)
	}

	raw, err := ReadRaw(filepath.Join(dir, RawFile("off")))
	if err != nil {
		t.Fatalf("ReadRaw: %v", err)
	}
	if got, want := len(raw), 4; got != want {
		t.Fatalf("raw results read back: got %d, want %d", got, want)
	}
	if !raw[2].Equal(o.Strategies[0].Results[2]) {
		t.Errorf("raw result 2: got %+v, want %+v", raw[2], o.Strategies[0].Results[2])
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := writeHTML(&b, outcome()); err != nil {
		t.Fatalf("writeHTML: %v", err)
	}
	page := b.String()
	if got, want := strings.Count(page, "<svg"), 3+2; got != want {
		t.Errorf("charts: got %d <svg>, want %d (3 bar charts, 1 scatter per strategy)", got, want)
	}
	for _, bad := range []string{"<script", "src=", "href=\"http", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must not load anything", bad)
		}
	}
	if !strings.Contains(page, "because &lt;b&gt;off&lt;/b&gt;") {
		t.Errorf("why-line not escaped")
	}
	if !strings.Contains(page, "node(s) down") {
		t.Errorf("scatter of the redlock attack has no kill marker")
	}
}

func TestTextAndMarkdownTables(t *testing.T) {
	o := outcome()
	var text, md bytes.Buffer
	if err := WriteText(&text, o); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	if !strings.HasPrefix(lines[0], "strategy") || !strings.Contains(lines[0], "dup_orders") || !strings.Contains(lines[0], "p99") {
		t.Errorf("text header %q, want the table's columns", lines[0])
	}
	if !strings.HasPrefix(lines[1], "off ") || !strings.HasPrefix(lines[2], "redlock ") {
		t.Errorf("text rows:\n%s", text.String())
	}
	if !strings.Contains(text.String(), "UNSAFE") {
		t.Errorf("text does not flag the unsafe redlock row (inconsistent audit):\n%s", text.String())
	}
	if !strings.Contains(md.String(), "| strategy | reqs | 201 |") || !strings.Contains(md.String(), "---:|") {
		t.Errorf("markdown table missing:\n%s", md.String())
	}
}

func TestMillis(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{1500 * time.Microsecond, "1.5ms"},
		{41 * time.Millisecond, "41.0ms"},
		{250 * time.Millisecond, "250ms"},
		{1250 * time.Millisecond, "1.25s"},
	} {
		if got := Millis(tc.in); got != tc.want {
			t.Errorf("Millis(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRestartInReportJSON(t *testing.T) {
	o := outcome()
	o.Settings.Faults = []fault.Fault{&fault.EmptyRestart{Nodes: 3, Delay: time.Second}}
	o.FaultMethods = []string{"redis-restart: test: restarted"}
	restart := &fault.Restart{Nodes: []int{0, 1, 2}, Restarted: true,
		At: 50 * time.Millisecond, Back: 1050 * time.Millisecond, Delay: time.Second, GrantedWhileHeld: 0}
	o.Strategies[1].Records = fault.Records{restart}
	doc := NewDocument(o)
	if doc.Strategies[0].Restart != nil {
		t.Errorf("off row: restart %+v, want none", doc.Strategies[0].Restart)
	}
	r := doc.Strategies[1].Restart
	if r == nil || len(r.Nodes) != 3 || r.Nodes[0] != 1 || r.Nodes[2] != 3 || !r.Restarted ||
		r.AtSeconds != 0.05 || r.BackSeconds != 1.05 || r.DelayMs != 1000 || r.GrantedWhileHeld == nil || *r.GrantedWhileHeld != 0 {
		t.Errorf("redlock row: restart %+v, want nodes 1,2,3 at 0.05s, back 1.05s, delay 1000ms, granted while held 0", r)
	}
	if doc.Settings.Faults["redis-restart"] != "3" || doc.Settings.Faults["restart-delay"] != "1s" || len(doc.FaultMethods) != 1 {
		t.Errorf("settings %+v, methods %q: want the restart's", doc.Settings, doc.FaultMethods)
	}
	restart.GrantedWhileHeld = -1
	if r := NewDocument(o).Strategies[1].Restart; r.GrantedWhileHeld != nil {
		t.Errorf("granted while held not measured (-1): got %d, want the field left out", *r.GrantedWhileHeld)
	}
	if line := settingsLine(o); !strings.Contains(line, "--redis-restart 3 --restart-delay 1s") {
		t.Errorf("settings line %q does not repeat the restart", line)
	}
}
