package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A sweep that runs out of file descriptors says so, with the limit, keeps
// the points measured before in report.json, and exits 4. The child
// loadgen gets 450 descriptors (ulimit -n, soft and hard, so that Go does
// not raise it): enough for the embedded fleet at 50 clicks/s, not for
// the connections of 4,000/s.
func TestSweepOutOfFilesExits4(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the sweep that runs out of file descriptors")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	cmd := loadgenProcess(ctx, t, "--strategies", "sql-atomic", "--sweep", "50,4000", "--duration", "1s", "--out", out)
	cmd.Args = append([]string{"sh", "-c", `ulimit -n 450 && exec "$0" "$@"`}, cmd.Args...)
	cmd.Path = "/bin/sh"
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitFiles {
		t.Fatalf("exit: %v, want %d; stderr:\n%s\nstdout:\n%s", err, exitFiles, stderr.String(), stdout.String())
	}
	for _, want := range []string{"ran out of file descriptors", "too many open files", "the limit is 450 open files (ulimit -n", "ulimit -n 65536"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	doc := readReport(t, out)
	if !strings.Contains(doc.Stopped, "too many open files") {
		t.Errorf("report.json stopped %q, want the cause", doc.Stopped)
	}
	if doc.Sweep == nil || len(doc.Sweep.Rows) != 1 || len(doc.Sweep.Rows[0].Points) != 1 || doc.Sweep.Rows[0].Points[0].OfferedPerSecond != 50 ||
		doc.Sweep.Rows[0].Points[0].Requests == 0 {
		t.Errorf("report.json sweep %+v, want the point at 50/s and no other", doc.Sweep)
	}
}
