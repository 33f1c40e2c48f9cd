package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/report"
)

// Without --wide every line of the run fits 120 columns and the
// table has the terminal's columns; --wide, from the flag or from
// LOADGEN_WIDE, prints every column.
func TestWideTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     string
		columns []string
		fits    bool
	}{
		{"default", nil, "", report.TerminalColumns, true},
		{"--wide", []string{"--wide"}, "", report.Columns, false},
		{"LOADGEN_WIDE", nil, "true", report.Columns, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LOADGEN_WIDE", tc.env)
			args := append([]string{"--targets", stubShop(t), "--admin-token", "t", "--strategies", "lua", "--users", "5",
				"--stock", "1", "--rate", "50/100ms", "--out", t.TempDir()}, tc.args...)
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d, want 0; stderr %s", code, stderr.String())
			}
			out := stdout.String()
			header := strings.Join(tc.columns, " ")
			found := false
			for _, line := range strings.Split(out, "\n") {
				found = found || strings.Join(strings.Fields(line), " ") == header
				if tc.fits && report.ColumnsOf(line) > 120 {
					t.Errorf("line of %d columns, want at most 120:\n%s", report.ColumnsOf(line), line)
				}
			}
			if !found {
				t.Errorf("no header %q in stdout:\n%s", header, out)
			}
		})
	}
}
