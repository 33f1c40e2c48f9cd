package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// TestMain lets this test binary be a --crash run's child shop, as the
// loadgen binary is (fleet.ServeIfChildShop), and, with asLoadgen set in
// its environment, the loadgen command itself (loadgenProcess).
func TestMain(m *testing.M) {
	if os.Getenv(asLoadgen) != "" {
		main()
	}
	fleet.ServeIfChildShop()
	os.Exit(m.Run())
}

// --crash that cannot be done exits 2 before anything starts.
func TestCrashUsageErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"with targets", []string{"--targets", "http://127.0.0.1:8080", "--admin-token", "x", "--crash", "2"},
			"crash: not with --targets: the load generator kills only shop processes it started"},
		{"negative", []string{"--crash", "-1"}, "crash: -1, want 0..20 shop kills per attack"},
		{"too many", []string{"--crash", "21"}, "crash: 21, want 0..20"},
		{"with another fault", []string{"--crash", "1", "--strategies", "redlock", "--redlock-kill", "1"}, "crash: not with --redlock-kill: both strike the redlock row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append([]string{"--out", out}, tc.args...), &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), tc.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) > 0 || stdout.Len() > 0 {
				t.Errorf("something started: %d entries in --out, stdout %q", len(entries), stdout.String())
			}
		})
	}
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"--help"}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "  --crash\n") || !strings.Contains(stdout.String(), "Add --crash 2") {
		t.Errorf("--help does not describe --crash:\n%s", stdout.String())
	}
}

// A --crash 1 run through the whole command: its shops are this binary
// re-executed, their logs in the report folder, and report.json has each
// row's kill.
func TestCrashRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the crash run (it starts shop processes and kills them)")
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--crash", "1", "--strategies", "sql-atomic", "--users", "120", "--stock", "20",
		"--rate", "100", "--stall-rate", "0", "--fail-on-unsafe", "--out", out}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
	}
	if !strings.Contains(stdout.String(), "SIGKILLed") {
		t.Errorf("the why-line does not tell of the kill:\n%s", stdout.String())
	}
	doc, file := onlyReport(t, out)
	c := doc.Strategies[0].Crash
	if doc.Settings.Faults["crash"] != "1" || c == nil || c.Done != 1 || c.Kills[0].BackSeconds < c.Kills[0].AtSeconds || c.AnsweredWithoutRow != 0 {
		t.Errorf("report.json: settings.faults %v, crash %+v: want one kill, the shop back, every order answered with its row", doc.Settings.Faults, c)
	}
	logs, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "shop-*.log"))
	if len(logs) != 3 {
		t.Errorf("shop logs %v, want one per shop", logs)
	}
}

// --crash sells the rows and the stock its kills need, except what the
// command line gave.
func TestCrashSellsItsSale(t *testing.T) {
	c, err := parseFlags([]string{"--crash", "2"}, io.Discard)
	if err != nil {
		t.Fatalf("parseFlags: %v", err)
	}
	want := []scenario.Strategy{"fenced", "sql-atomic", "sql-one-trip", "redis-decr", "redis-queue", "fenced+batch"}
	if s := c.settings; s.Stock != fault.CrashStock || !slices.Equal(s.Strategies, want) || len(s.Faults) != 1 || s.Faults[0].(*fault.ShopCrash).Kills != 2 {
		t.Errorf("settings: stock %d, strategies %v, faults %v; want %d, %v, --crash 2", s.Stock, s.Strategies, s.Faults, fault.CrashStock, want)
	}
	c, err = parseFlags([]string{"--crash", "1", "--strategies", "lua", "--stock", "7"}, io.Discard)
	if err != nil {
		t.Fatalf("parseFlags: %v", err)
	}
	if s := c.settings; s.Stock != 7 || len(s.Strategies) != 1 || s.Strategies[0] != "lua" {
		t.Errorf("given --strategies lua --stock 7: strategies %v, stock %d", s.Strategies, s.Stock)
	}
	if c, _ := parseFlags(nil, io.Discard); c.settings.Stock != scenario.DefaultSettings().Stock || len(c.settings.Faults) != 0 {
		t.Errorf("without --crash: stock %d, faults %v", c.settings.Stock, c.settings.Faults)
	}
}
