package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// asLoadgen, set in the environment, makes this test binary run loadgen's
// main on its arguments instead of the tests (TestMain).
const asLoadgen = "FLASHSALE_TEST_AS_LOADGEN"

// loadgenProcess is loadgen with args, as a process of its own: this test
// binary re-executed (asLoadgen). The caller starts and waits for it.
func loadgenProcess(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), asLoadgen+"=1")
	return cmd
}

// Two generator processes each send half of one crowd (--part 1/2 and
// 2/2) to one fleet; loadgen merge puts their folders together. The merged
// counts are the sums of the parts', the merged p99 is the p99 of the two
// parts' samples together, and the audit, done once over the fleet, saw
// every order both parts made.
func TestMergeTwoGenerators(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the two generator processes")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	f, err := fleet.StartFleet(ctx, fleet.FleetConfig{})
	if err != nil {
		t.Fatalf("fleet.StartFleet: %v", err)
	}
	t.Cleanup(func() { f.Close() })

	const stock = 40
	sale := []string{"--targets", strings.Join(f.Targets, ","), "--admin-token", f.AdminToken,
		"--strategies", "lua,sql-atomic", "--users", "150", "--clicks", "2", "--stock", fmt.Sprint(stock),
		"--rate", "300", "--stall-rate", "0", "--run-id", "two-generators"}
	var dirs []string
	var procs []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 1; i <= 2; i++ {
		out := t.TempDir()
		var stdout bytes.Buffer
		cmd := loadgenProcess(ctx, t, append(sale, "--part", fmt.Sprintf("%d/2", i), "--out", out)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, &stdout)
	}
	for i, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("part %d/2: %v\n%s", i+1, err, outs[i])
		}
		lines := strings.Split(strings.TrimSpace(outs[i].String()), "\n")
		dirs = append(dirs, lines[len(lines)-1]) // the report folder
	}

	var stdout, stderr bytes.Buffer
	mergeOut := t.TempDir()
	args := append([]string{"merge", "--targets", strings.Join(f.Targets, ","), "--admin-token", f.AdminToken, "--out", mergeOut}, dirs...)
	if code := run(ctx, args, &stdout, &stderr); code != exitOK {
		t.Fatalf("loadgen merge: exit %d; stderr:\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
	}
	// One part alone is not the crowd.
	if code := run(ctx, []string{"merge", "--targets", f.Targets[0], "--admin-token", "x", "--out", t.TempDir(), dirs[0]}, &stdout, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "is part 1/2, but 1 folder(s) given") {
		t.Errorf("merge of one part of two: exit %d, want %d; stderr:\n%s", code, exitUsage, stderr.String())
	}
	merged := readReport(t, mergeOut)
	parts := []report.Document{readReportDir(t, dirs[0]), readReportDir(t, dirs[1])}
	if merged.Parts != 2 || len(merged.Strategies) != 2 {
		t.Fatalf("merged report: parts %d, %d rows; want 2 parts, 2 rows", merged.Parts, len(merged.Strategies))
	}
	for k, m := range merged.Strategies {
		a, b := parts[0].Strategies[k], parts[1].Strategies[k]
		t.Run(m.Strategy, func(t *testing.T) {
			if a.Sent == 0 || b.Sent == 0 {
				t.Fatalf("parts sent %d and %d: want both to send", a.Sent, b.Sent)
			}
			if got, want := m.Sent, a.Sent+b.Sent; got != want {
				t.Errorf("sent %d, want %d + %d", got, a.Sent, b.Sent)
			}
			if got, want := m.Planned, a.Planned+b.Planned; got != want {
				t.Errorf("planned %d, want %d + %d", got, a.Planned, b.Planned)
			}
			for name, get := range map[string]func(tally.Answers) int{
				"answers": func(x tally.Answers) int { return x.Requests }, "201": func(x tally.Answers) int { return x.Created },
				"sold out": func(x tally.Answers) int { return x.SoldOut }, "duplicate requests": func(x tally.Answers) int { return x.DuplicateRequests },
			} {
				if got, want := get(m.Answers), get(a.Answers)+get(b.Answers); got != want {
					t.Errorf("%s: %d, want %d + %d", name, got, get(a.Answers), get(b.Answers))
				}
			}
			// The audit saw both parts' orders on one product.
			if m.Audit.InitialStock != stock || m.Audit.Sold != m.Answers.Created || m.Audit.Oversold != 0 || !m.Audit.Consistent {
				t.Errorf("audit %+v, want %d units, %d sold as answered 201, consistent", m.Audit, stock, m.Answers.Created)
			}
			var ls []time.Duration
			for _, dir := range dirs {
				rs, err := report.ReadRaw(filepath.Join(dir, report.RawFile(m.Strategy)))
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rs {
					ls = append(ls, r.Latency)
				}
			}
			slices.Sort(ls)
			t.Logf("parts sent %d + %d, merged %d; 201s %d, sold %d; p99 %v ms of %d samples", a.Sent, b.Sent, m.Sent, m.Answers.Created, m.Audit.Sold, m.Latency.P99, len(ls))
			if got, want := m.Latency.P99, float64(scenario.Quantile(ls, 0.99))/float64(time.Millisecond); got != want {
				t.Errorf("p99 %v ms, want %v ms: the p99 of the %d samples of both parts", got, want, len(ls))
			}
		})
	}
}

// readReportDir reads report.json in dir.
func readReportDir(t *testing.T, dir string) report.Document {
	t.Helper()
	d, err := readReportFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
