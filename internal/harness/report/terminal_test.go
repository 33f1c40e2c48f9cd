package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// longWhy is a why-line as long as the etcd row's in a default run.
const longWhy = "each holder's lease and place in the queue were written through the etcd cluster's quorum, " +
	"waiters were woken in revision order, and the key's revision was registered in the database before the " +
	"stock was read: 0 stale holders fenced out, sold 100 of 100, 0 overlapping sales, oversold 0, " +
	"duplicate orders 0; cost: 503 busy×383"

// fleetLong is fleetOutcome with why-lines of a default run's length and
// errors of every kind on its lua row.
func fleetLong() *scenario.Outcome {
	o := fleetOutcome()
	for _, m := range o.Strategies {
		m.Why = longWhy
	}
	lua := o.Strategies[2]
	for _, k := range []string{"0 timeout", "500 internal", "502 bad_gateway", "503 busy", "504 gateway_timeout"} {
		lua.Tally.Errors[k] += 1234
	}
	return o
}

// fleetCountLong is fleetCount with every row's why-line long.
func fleetCountLong() *scenario.Outcome {
	o := fleetCount()
	for _, m := range o.Strategies {
		m.Why = longWhy
	}
	return o
}

// The width, not TerminalWidth: raising the constant must fail here.
const terminalColumns = 120

func TestTerminalFitsWidth(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    *scenario.Outcome
	}{
		{"default run", fleetOutcome()},
		{"long why-lines and many errors", fleetLong()},
		{"count", fleetCountLong()},
		{"crash", fleetCrash()},
		{"sweep", fleetSweep()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, tc.o); err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(b.String(), "\n") {
				if got := ColumnsOf(line); got > terminalColumns {
					t.Errorf("line %d: got %d columns, want at most %d:\n%s", i+1, got, terminalColumns, line)
				}
			}
			if len(tc.o.Sweep) > 0 {
				return
			}
			header := strings.Fields(strings.SplitN(b.String(), "\n", 2)[0])
			if got, want := strings.Join(header, " "), strings.Join(TerminalColumns, " "); got != want {
				t.Errorf("header: got %q, want %q", got, want)
			}
			for _, m := range tc.o.Strategies {
				if !strings.Contains(b.String(), "\n"+string(m.Strategy)+" ") {
					t.Errorf("no row for %s:\n%s", m.Strategy, b.String())
				}
			}
		})
	}
}

// The terminal's table shows the lesson's figures, taken from the full
// table's cells.
func TestTerminalRows(t *testing.T) {
	o := fleetOutcome()
	o.Strategies[0].Tally.Queued = 2
	rows := TerminalRows(o)
	off := rows[0]
	if got, want := strings.Join(off[:5], " "), "off "+itoa(o.Strategies[0].Tally.Created+2)+" 3 0 yes"; got != want {
		t.Errorf("off: got %q, want %q (sold is 201 and 202 together)", got, want)
	}
	if got, want := off[len(off)-1], o.Strategies[0].Tally.ErrorsByStatus(); got != want {
		t.Errorf("off errors: got %q, want %q", got, want)
	}
	if got := fleetCount().Strategies[2]; len(got.Runs) != 3 {
		t.Fatalf("fixture: lua runs %d, want 3", len(got.Runs))
	}
	if got := TerminalRows(fleetCount())[2][1]; got != "100" {
		t.Errorf("lua over 3 runs: sold %q, want 100 (every run agreed)", got)
	}
}

func itoa(n int) string { return formatFigure(Figure{}, float64(n)) }

// --wide and report.md keep every column and every why-line whole.
func TestWideTextAndMarkdownKeepEverything(t *testing.T) {
	o := fleetLong()
	var wide, md bytes.Buffer
	if err := WriteWideText(&wide, o); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	header := strings.Fields(strings.SplitN(wide.String(), "\n", 2)[0])
	if got, want := strings.Join(header, " "), strings.Join(Columns, " "); got != want {
		t.Errorf("wide header: got %q, want %q", got, want)
	}
	for name, out := range map[string]string{"wide": wide.String(), "report.md": md.String()} {
		if got, want := strings.Count(out, longWhy), len(o.Strategies); got != want {
			t.Errorf("%s: got %d whole why-lines, want %d", name, got, want)
		}
	}
	if !strings.Contains(wide.String(), "0×1234 500×1234 502×1234 503×") {
		t.Errorf("wide: errors cell cut:\n%s", wide.String())
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		width    int
		want     string
	}{
		{"fits", "sold 100 of 100", 20, "sold 100 of 100"},
		{"exactly", "sold 100 of 100", 15, "sold 100 of 100"},
		{"at a word", "sold 100 of 100, oversold 0", 20, "sold 100 of 100…"},
		{"punctuation dropped", "no lock: one conditional UPDATE", 12, "no lock…"},
		{"one long word", "503×871,503×12,503×1", 10, "503×871,5…"},
		{"wide characters", "双11: 660 buyers", 10, "双11…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Clip(tc.in, tc.width)
			if got != tc.want {
				t.Errorf("Clip(%q, %d): got %q, want %q", tc.in, tc.width, got, tc.want)
			}
			if ColumnsOf(got) > tc.width {
				t.Errorf("Clip(%q, %d) = %q: %d columns", tc.in, tc.width, got, ColumnsOf(got))
			}
		})
	}
}

func TestWrap(t *testing.T) {
	title := "双11: 660 buyers clicking 1..3 times (1327 requests) for 100 units, at 250 req/s, on 3 shops " +
		"(embedded SQLite + 5 embedded miniredis nodes (127.0.0.1:40373,127.0.0.1:33719,127.0.0.1:43227," +
		"127.0.0.1:42553,127.0.0.1:40983) + a 3-member embedded etcd cluster)"
	lines := Wrap(title, TerminalWidth)
	for _, l := range lines {
		if ColumnsOf(l) > TerminalWidth {
			t.Errorf("line of %d columns: %s", ColumnsOf(l), l)
		}
	}
	if got := strings.Join(lines, " "); got != title {
		t.Errorf("wrapped title joined: got %q, want the title", got)
	}
}
