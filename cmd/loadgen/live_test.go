package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/testenv/browser"
	"github.com/flashsale/flashsale/internal/porthold"
)

// The live page, in a real browser: headless Chromium, driven with
// chromedp (a Go library: the test stays a go test, with no Node.js or
// browser bundle to fetch), watches a small embedded run. While the run
// goes the counters change, with no reload; when it is over the page shows
// exactly the figures of report.json. Screenshots, light and dark, go to
// FLASHSALE_LIVE_SCREENSHOTS if set, else to the test's temp dir
// (docs/live.png is scripts/results/live.sh's, of a full-size sale).
func TestLivePageInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the browser test (it starts Chromium and a sale)")
	}
	addr := freeAddr(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	// The browser first: it takes seconds to start, and the run should
	// not be half over when the page first loads.
	bctx := browser.Open(ctx, t, 1280, 760)

	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"--strategies", "off,lua,sql-atomic", "--users", "180", "--stock", "40", "--clicks", "2",
			"--rate", "100", "--stall-rate", "0", "--live-addr", addr, "--out", out}, io.Discard, io.Discard)
	}()
	url := "http://" + addr + "/"
	waitServing(t, url, exit)
	if err := chromedp.Run(bctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}

	// While it runs: the requests sent on the cards, sampled; the page is
	// never reloaded, so any change came through the events.
	seen := map[string]bool{}
	var done bool
	for !done {
		var sent, state string
		err := chromedp.Run(bctx,
			chromedp.Evaluate(`[...document.querySelectorAll('[data-k="sent_requests"]')].map(e => e.dataset.value).join(" ")`, &sent),
			chromedp.Evaluate(`document.body.dataset.done ?? ""`, &state))
		if err != nil {
			t.Fatalf("read the page: %v", err)
		}
		if state != "true" && strings.TrimSpace(sent) != "" {
			seen[sent] = true
			if len(seen) == 3 {
				shoot(t, bctx, "live-running.png")
			}
		}
		done = state == "true"
		if !done {
			select {
			case <-ctx.Done():
				t.Fatalf("the page never said the run was done (requests sent seen: %v)", seen)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	if len(seen) < 3 {
		t.Errorf("the requests sent took %d values while the run went (%v), want the counters to move", len(seen), seen)
	}
	shoot(t, bctx, "live-light.png")
	if err := chromedp.Run(bctx, chromedp.Evaluate(`document.documentElement.dataset.theme = "dark"`, nil)); err != nil {
		t.Fatal(err)
	}
	shoot(t, bctx, "live-dark.png")

	// At the end: the figures of report.json, to the last digit.
	var page map[string]map[string]string
	err := chromedp.Run(bctx, chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('[data-strategy]')].map(c =>
		[c.dataset.strategy, Object.fromEntries([...c.querySelectorAll('[data-k]')].map(e => [e.dataset.k, e.dataset.value]))]))`, &page))
	if err != nil {
		t.Fatal(err)
	}
	var lives int
	if err := chromedp.Run(bctx, chromedp.Evaluate(`document.querySelectorAll('.life:not([hidden])').length`, &lives)); err != nil {
		t.Fatal(err)
	}
	if lives != 0 {
		t.Errorf("%d cards show what became of the orders after the click in a sale without payments, want none", lives)
	}
	if code := <-exit; code != exitOK {
		t.Fatalf("loadgen exit %d", code)
	}
	doc := readReport(t, out)
	for _, m := range doc.Strategies {
		want := map[string]float64{
			"units_left": float64(m.Audit.Stock), "initial_stock": float64(m.Audit.InitialStock),
			"sold": float64(m.Audit.Sold), "oversold": float64(m.Audit.Oversold),
			"duplicate_orders": float64(m.Audit.DuplicateOrders), "status_503": float64(m.Answers.Status[503]),
			"sent_requests": float64(m.Sent), "orders_per_second": m.OrdersPerSec,
			"p50_ms": m.Latency.P50, "p90_ms": m.Latency.P90, "p99_ms": m.Latency.P99,
		}
		for k, w := range want {
			got, err := strconv.ParseFloat(page[m.Strategy][k], 64)
			if err != nil || got != w {
				t.Errorf("%s %s: page shows %q, report.json says %v", m.Strategy, k, page[m.Strategy][k], w)
			}
		}
	}
}

// freeAddr returns a loopback address nobody listens on, just now.
func freeAddr(t *testing.T) string {
	t.Helper()
	free, err := porthold.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", free[0])
}

// waitServing waits for the live page to answer, or for run to end.
func waitServing(t *testing.T, url string, exit <-chan int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case code := <-exit:
			t.Fatalf("loadgen ended (exit %d) before its live page answered", code)
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not answer within two minutes", url)
}

// shoot saves a screenshot of the whole page.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.Sleep(300*time.Millisecond), chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("FLASHSALE_LIVE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}

// readReport reads the one report.json under out.
func readReport(t *testing.T, out string) report.Document {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, "[0-9]*", report.JSONFile)) // not latest/, the link
	if len(files) != 1 {
		t.Fatalf("report.json files under %s: %v, want one", out, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc report.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(fmt.Errorf("%s: %w", files[0], err))
	}
	return doc
}
