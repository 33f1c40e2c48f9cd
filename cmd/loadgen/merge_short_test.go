package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/report"
)

// writePart writes a part folder as loadgen --part i/n leaves it:
// report.json saying it sent sent requests of row lua, and
// results-lua.bin holding the first kept of them.
func writePart(t *testing.T, i, n, sent, kept int) string {
	t.Helper()
	return writePartDoc(t, i, n, sent, kept, nil)
}

// writePartDoc is writePart with report.json changed by edit first, if
// edit is not nil.
func writePartDoc(t *testing.T, i, n, sent, kept int, edit func(*report.Document)) string {
	t.Helper()
	dir := t.TempDir()
	doc := report.Document{Flags: map[string]string{"modes": "lua", "run-id": "short", "part": fmt.Sprintf("%d/%d", i, n)}}
	doc.Settings.Part = fmt.Sprintf("%d/%d", i, n)
	doc.PartRun = &report.PartRunDoc{Instance: fmt.Sprintf("run-of-part-%d", i), Finished: true}
	t0 := time.Now()
	doc.Strategies = []report.StrategyDoc{{Strategy: "lua", Sent: sent, Planned: sent,
		Span: &report.SpanDoc{StartedAt: t0, SendSeconds: float64(sent) / 1000, WaitSeconds: 0.001, PeriodSeconds: 0.001}}}
	if edit != nil {
		edit(&doc)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, report.JSONFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, report.RawFile("lua")))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := vegeta.NewEncoder(w)
	for k := range kept {
		r := vegeta.Result{Attack: "lua", Seq: uint64(k), Code: 201, Timestamp: t0.Add(time.Duration(k) * time.Millisecond), Latency: time.Millisecond, Method: "POST", URL: "http://x/api/v1/orders"}
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A part's results-<strategy>.bin that holds fewer results than its
// report.json says it sent: cut at a record's end (a copy stopped short, a
// full disk) or still empty (merge started while the part was writing its
// report: report.json is written before the .bin files). The merge must
// refuse it, not sum fewer answers and take latencies from fewer samples.
func TestMergeRefusesShortResults(t *testing.T) {
	for _, tc := range []struct {
		name string
		kept int
	}{{"cut at a record's end", 150}, {"still empty", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := writePart(t, 1, 2, 200, 200), writePart(t, 2, 2, 200, tc.kept)
			_, rows, err := readParts([]string{a, b}, "http://127.0.0.1:1", "tok", t.TempDir())
			if err == nil {
				t.Errorf("readParts: no error; row lua's parts %d: part 2/2 said it sent 200 and its .bin holds %d", len(rows[0].Parts), tc.kept)
			}
		})
	}
	t.Run("cut inside a record", func(t *testing.T) {
		a, b := writePart(t, 1, 2, 200, 200), writePart(t, 2, 2, 200, 200)
		path := filepath.Join(b, report.RawFile("lua"))
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, fi.Size()-7); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readParts([]string{a, b}, "http://127.0.0.1:1", "tok", t.TempDir()); err == nil {
			t.Errorf("readParts: no error on a .bin cut inside a record")
		}
	})
}
