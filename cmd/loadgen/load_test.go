package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/report"
)

// stubShop answers every order 201 and audits an oversell of one unit:
// enough for the command's plumbing.
func stubShop(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/audit"):
			io.WriteString(w, `{"product_id":"p","strategy":"lua","initial_stock":1,"stock":0,"orders":2,"sold":2,"oversold":1,"duplicate_orders":0,"consistent":false}`)
		case strings.HasSuffix(r.URL.Path, "/events"):
			io.WriteString(w, `{"late_commits":0,"fenced_out":0,"locks_lost":0,"given_back":0}`)
		default:
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A failed threshold exits 99 and names its row; the report folder's path
// is the last line, latest points at it, and report.json has every flag.
func TestThresholdExits99AndReportIsLast(t *testing.T) {
	out := t.TempDir()
	args := []string{"--targets", stubShop(t), "--admin-token", "t", "--buyer-secret", "stub-buyer-secret-16+", "--strategies", "lua", "--users", "5", "--stock", "1",
		"--rate", "50/100ms", "--batch", "16", "--out", out, "--threshold", "oversold==0", "--threshold", "p99<10s"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != exitThreshold {
		t.Fatalf("exit %d, want %d; stderr %s\nstdout %s", code, exitThreshold, stderr.String(), stdout.String())
	}
	if !strings.Contains(stdout.String(), "THRESHOLDS FAILED") || !strings.Contains(stdout.String(), "lua: oversold==0 failed: it was 1") {
		t.Errorf("stdout does not say which row failed which threshold:\n%s", stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	dir := lines[len(lines)-1]
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("last line %q is not the report folder: %v", dir, err)
	}
	if got, _ := os.Readlink(filepath.Join(out, report.LatestLink)); got != filepath.Base(dir) {
		t.Errorf("latest -> %q, want %q", got, filepath.Base(dir))
	}
	var doc report.Document
	b, _ := os.ReadFile(filepath.Join(dir, report.JSONFile))
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Flags["batch"] != "16" || doc.Flags["rate"] != "50/100ms" || doc.Flags["admin-token"] == "t" || doc.Flags["buyer-secret"] != "(given, not recorded)" || doc.Settings.Batch != 16 {
		t.Errorf("report.json flags %v, batch %d: want batch 16, rate 50/100ms, the token and the secret not recorded", doc.Flags, doc.Settings.Batch)
	}
	if doc.Thresholds == nil || len(doc.Thresholds.Failed) != 1 {
		t.Errorf("report.json thresholds %+v, want one failure", doc.Thresholds)
	}
}

// LOADGEN_* variables set flags; the command line wins.
func TestEnvironmentMirrorsFlags(t *testing.T) {
	t.Setenv("LOADGEN_RATE", "30/100ms")
	t.Setenv("LOADGEN_USERS", "77")
	t.Setenv("LOADGEN_LOCK_WAIT", "3s")
	c, err := parseFlags([]string{"--users", "88"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.settings.Rate != 30 || c.settings.PerSecond() != 300 || c.settings.Users != 88 || c.lockWait.String() != "3s" {
		t.Errorf("rate %d per %v, users %d, lock-wait %v; want 30/100ms and 3s from the environment, 88 from the command line",
			c.settings.Rate, c.settings.RatePer, c.settings.Users, c.lockWait)
	}
	t.Setenv("LOADGEN_COUNT", "many")
	if _, err := parseFlags(nil, io.Discard); err == nil || !strings.Contains(err.Error(), "LOADGEN_COUNT") {
		t.Errorf("bad LOADGEN_COUNT: %v, want an error naming it", err)
	}
}

// A sweep sells what a sweep needs unless told otherwise.
func TestSweepSellsItsProduct(t *testing.T) {
	c, err := parseFlags([]string{"--sweep", "250,50/100ms", "--duration", "2s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := c.settings
	if len(c.sweep) != 2 || s.Users != 0 || s.Stock != 1_000_000 || s.StallRate != 0 || s.Duration.String() != "2s" {
		t.Errorf("sweep %v: users %d, stock %d, stall-rate %v, duration %v; want 2 rates, 0, 1000000, 0, 2s (given)",
			c.sweep, s.Users, s.Stock, s.StallRate, s.Duration)
	}
}

// compare prints each figure side by side with its change, and, with
// --count data, whether it is outside the spread.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, orders, lo, hi float64) string {
		doc := report.Document{Strategies: []report.StrategyDoc{{Strategy: "lua", Runs: 3,
			Figures: map[string]float64{"orders/s": orders, "p99": 12},
			Spread:  map[string]report.Spread{"orders/s": {Median: orders, Min: lo, Max: hi}, "p99": {Median: 12, Min: 11, Max: 13}}}}}
		doc.Settings.Count = 3
		b, _ := json.Marshal(doc)
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	a, b := write("a.json", 400, 390, 410), write("b.json", 500, 480, 520)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"compare", a, b}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{"orders/s", "400 (390–410)", "500 (480–520)", "+25.0%", "outside the spread"} {
		if !strings.Contains(got, want) {
			t.Errorf("compare output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "p99") && !strings.Contains(got, "=") {
		t.Errorf("an unchanged p99 is not shown as unchanged:\n%s", got)
	}
	if code := run(context.Background(), []string{"compare", a}, &stdout, &stderr); code != exitUsage {
		t.Errorf("compare with one report: exit %d, want %d", code, exitUsage)
	}
}

// --rtt (or LOADGEN_RTT) lands in the settings, which the reports read,
// and in the title of the run.
func TestRTTFlag(t *testing.T) {
	t.Setenv("LOADGEN_RTT", "db=2ms")
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.settings.RTT.String(), "db=2ms"; got != want {
		t.Errorf("settings.RTT from LOADGEN_RTT: got %q, want %q", got, want)
	}
	if c, err = parseFlags([]string{"--rtt", "2ms"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got, want := runTitle(c, 3, "embedded"), ", rtt 2ms"; !strings.Contains(got, want) {
		t.Errorf("runTitle: %q, want it to say %q", got, want)
	}
	t.Setenv("LOADGEN_RTT", "")
	if c, err = parseFlags(nil, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := runTitle(c, 3, "embedded"); strings.Contains(got, "rtt") {
		t.Errorf("runTitle without --rtt: %q, want no rtt in it", got)
	}
}
