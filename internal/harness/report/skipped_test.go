package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A skipped row is never silently missing: the terminal, report.md,
// report.html and report.json each show it, with the command that runs it,
// after the rows that ran.
func TestSkippedRowIsShown(t *testing.T) {
	o := fleetOutcome()
	o.Strategies = o.Strategies[:2]
	o.Skipped = []scenario.Skipped{{Strategy: "zookeeper", Why: "no ensemble: `apt-get install zookeeper` enables it"}}
	const why = "zookeeper: skipped: no ensemble: `apt-get install zookeeper` enables it"

	var term bytes.Buffer
	if err := WriteText(&term, o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(term.String(), "\n")
	if row := strings.Fields(lines[3]); len(row) != len(TerminalColumns) || row[0] != "zookeeper" || row[1] != "skipped" || row[2] != "-" {
		t.Errorf("terminal row after the two that ran: %q, want zookeeper skipped - ...", lines[3])
	}
	if !strings.Contains(strings.Join(strings.Fields(term.String()), " "), why) {
		t.Errorf("terminal lacks the why-line %q:\n%s", why, term.String())
	}

	var md bytes.Buffer
	if err := writeMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	if row := "| zookeeper | skipped |" + strings.Repeat(" - |", len(Columns)-2); !strings.Contains(md.String(), row+"\n") {
		t.Errorf("report.md lacks the row %q:\n%s", row, md.String())
	}
	if !strings.Contains(md.String(), "- **zookeeper**: skipped: no ensemble") {
		t.Errorf("report.md lacks the why-line:\n%s", md.String())
	}

	var page bytes.Buffer
	if err := writeHTML(&page, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<b>zookeeper</b>: skipped: no ensemble") || !strings.Contains(page.String(), ">skipped<") {
		t.Errorf("report.html lacks the skipped row or its why-line")
	}

	doc, err := json.Marshal(NewDocument(o))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"skipped":[{"strategy":"zookeeper","why":"no ensemble:`) {
		t.Errorf("report.json lacks the skipped row: %s", doc)
	}
}
