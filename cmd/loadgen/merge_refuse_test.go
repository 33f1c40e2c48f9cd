package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/report"
)

// The merge refuses folders that are not the parts of one crowd run
// together, naming them: a part stopped before it finished, one run of a
// part given twice, two runs of one part, and parts whose attacks did not
// overlap in time (two runs that share a --run-id). Parts a little
// apart by their clocks still merge.
func TestMergeRefusesPartsOfNoOneCrowd(t *testing.T) {
	later := func(d time.Duration) func(*report.Document) {
		return func(doc *report.Document) { doc.Strategies[0].Span.StartedAt = doc.Strategies[0].Span.StartedAt.Add(d) }
	}
	for _, tc := range []struct {
		name string
		edit func(*report.Document) // part 2/2's report
		same bool                   // part 2/2 is part 1/2's run again
		want string                 // in the error; "" for none
	}{
		{"part stopped", func(d *report.Document) {
			d.PartRun.Finished, d.Stopped = false, "interrupted (SIGINT or SIGTERM): context canceled"
		}, false, "was stopped before it finished (interrupted"},
		{"one run given twice", nil, true, "are one run of part 1/2 given twice"},
		{"two runs of one part", func(d *report.Document) { d.Settings.Part, d.Flags["part"] = "1/2", "1/2" }, false, "are both part 1/2"},
		{"parts a minute apart", later(time.Minute), false, "did not run together"},
		{"parts half a second apart by their clocks", later(500 * time.Millisecond), false, ""},
		{"no record of finishing", func(d *report.Document) { d.PartRun = nil }, false, "does not say whether it finished"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := writePart(t, 1, 2, 200, 200)
			b := writePartDoc(t, 2, 2, 200, 200, tc.edit)
			if tc.same {
				b = writePartDoc(t, 1, 2, 200, 200, nil)
			}
			_, _, err := readParts([]string{a, b}, "http://127.0.0.1:1", "tok", t.TempDir())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("readParts: %v, want the parts merged", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), b)):
				t.Errorf("readParts: %v, want an error naming %s and saying %q", err, b, tc.want)
			}
		})
	}
}

// A part stopped while it runs (here while it waits for part 1's
// product) writes its report saying it did not finish, and why.
func TestStoppedPartSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var once sync.Once
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/audit") {
			once.Do(cancel) // part 2 waits for a product that never comes: stop it there
		}
		http.Error(w, `{"error":{"code":"not_found"}}`, http.StatusNotFound)
	}))
	defer shop.Close()
	out := t.TempDir()
	code := run(ctx, []string{"--targets", shop.URL, "--admin-token", "tok", "--strategies", "lua", "--users", "10",
		"--part", "2/2", "--run-id", "stopped", "--out", out}, io.Discard, io.Discard)
	if code == exitOK {
		t.Fatalf("a stopped part: exit %d, want a failure", code)
	}
	d := readReport(t, out)
	if d.PartRun == nil || d.PartRun.Finished || !strings.Contains(d.Stopped, "interrupted") {
		t.Errorf("the stopped part's report: part_run %+v, stopped %q; want finished false, stopped saying interrupted", d.PartRun, d.Stopped)
	}
}
