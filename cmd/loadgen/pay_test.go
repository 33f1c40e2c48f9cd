package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/report"
)

// payReport runs loadgen with args on the embedded fleet, a small sale
// with a 600 ms pay window that the crowd outlasts (about 2.5 s of
// clicks), and returns its report.json and stdout.
func payReport(t *testing.T, args ...string) (report.Document, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skips the sales with payments")
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	base := []string{"--users", "160", "--stock", "20", "--rate", "100", "--stall-rate", "0",
		"--pay-within", "600ms", "--fail-on-unsafe", "--out", out}
	if code := run(context.Background(), append(base, args...), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
	}
	files, _ := filepath.Glob(filepath.Join(out, "[0-9]*", report.JSONFile))
	if len(files) != 1 {
		t.Fatalf("report.json files: %v, want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc report.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, stdout.String()
}

// checkLife checks what is always true of a safe row's sale with
// payments, once it has ended.
func checkLife(t *testing.T, doc report.Document) {
	t.Helper()
	for _, m := range doc.Strategies {
		a, l := m.Audit, m.Audit.Life
		if l == nil {
			t.Errorf("%s: no life in the audit", m.Strategy)
			continue
		}
		if l.Paid > a.InitialStock || a.Oversold != 0 || l.Undersold != 0 || l.Pending != 0 {
			t.Errorf("%s: paid %d of %d, oversold %d, undersold %d, pending %d; want paid ≤ initial, 0, 0, 0",
				m.Strategy, l.Paid, a.InitialStock, a.Oversold, l.Undersold, l.Pending)
		}
		if a.Stock+l.Paid != a.InitialStock {
			t.Errorf("%s: stock %d + paid %d, want the initial %d", m.Strategy, a.Stock, l.Paid, a.InitialStock)
		}
		if got, want := m.Events.Returned, int64(l.Expired+l.Cancelled); got != want {
			t.Errorf("%s: units returned %d, want one per expired unit, %d", m.Strategy, got, want)
		}
	}
}

// --pay 0.7: the unpaid units go back on sale once each and sell again,
// redis-decr's to Redis too.
func TestPayRun(t *testing.T) {
	doc, stdout := payReport(t, "--pay", "0.7", "--strategies", "sql-atomic,sql-for-update,redis-decr")
	if len(doc.Strategies) != 3 {
		t.Fatalf("rows %d, want sql-atomic, sql-for-update and redis-decr", len(doc.Strategies))
	}
	checkLife(t, doc)
	for _, m := range doc.Strategies {
		if l := m.Audit.Life; l.Expired == 0 || l.Resold == 0 {
			t.Errorf("%s: expired %d, resold %d: want units unpaid, returned and sold again", m.Strategy, l.Expired, l.Resold)
		}
		if p := m.Payments; p == nil || p.Chosen == 0 || p.Failed != 0 || p.Paid != m.Audit.Life.Paid {
			t.Errorf("%s: payments %+v, want some, none failed, as many 200s as paid units (%d)", m.Strategy, p, m.Audit.Life.Paid)
		}
	}
	if len(doc.Skipped) != 0 {
		t.Errorf("skipped %+v, want none", doc.Skipped)
	}
	if !strings.Contains(stdout, "after the click (--pay-within):") || !strings.Contains(stdout, "resold") {
		t.Errorf("stdout has no table of the orders' lives:\n%s", stdout)
	}
}

// --late-pay: payments at and just after their deadline end paid or
// expired, never both: nothing sold twice.
func TestLatePayRun(t *testing.T) {
	doc, _ := payReport(t, "--pay", "1", "--late-pay", "--strategies", "sql-atomic")
	checkLife(t, doc)
	m := doc.Strategies[0]
	if p := m.Payments; p == nil || p.Paid+p.Expired != p.Chosen || p.Expired == 0 {
		t.Errorf("payments %+v: want every one paid or refused as expired, some of them expired", p)
	}
}

// --clock-ahead: shop 1's clock most of the window ahead changes nothing in
// the sale, as the database's clock decides every deadline: every payer,
// paying within the window, is paid.
func TestClockAheadRun(t *testing.T) {
	doc, _ := payReport(t, "--pay", "1", "--users", "400", "--pay-within", "3s", "--clock-ahead", "2s", "--strategies", "sql-atomic")
	checkLife(t, doc)
	if p := doc.Strategies[0].Payments; p == nil || p.Chosen == 0 || p.Paid != p.Chosen {
		t.Errorf("payments %+v: want every payer paid, whatever shop 1's clock says", p)
	}
}

// --naive-expiry and --clock-ahead need a pay window and the in-process
// shops.
func TestShopClockFlagsRefused(t *testing.T) {
	for _, flag := range [][]string{{"--naive-expiry"}, {"--clock-ahead", "500ms"}} {
		for _, args := range [][]string{
			nil,
			{"--pay-within", "1s", "--targets", "http://127.0.0.1:1", "--admin-token", "t"},
			{"--pay-within", "1s", "--crash", "1"},
		} {
			if _, err := parseFlags(append(slices.Clone(flag), args...), io.Discard); err == nil {
				t.Errorf("parseFlags(%q) = nil, want a usage error", append(slices.Clone(flag), args...))
			}
		}
		if _, err := parseFlags(append(slices.Clone(flag), "--pay-within", "1s"), io.Discard); err != nil {
			t.Errorf("parseFlags(%q, --pay-within 1s): %v, want none", flag, err)
		}
	}
}
