package main

import (
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flashsale/flashsale/internal/harness/testenv/browser"
)

// The live page of a sale with payments, in a real browser: while the
// sale runs each card shows its units paid, expired, returned and sold
// again, and they move; at the end they are report.json's, to the unit.
func TestLivePageShowsTheOrdersLives(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the browser test (it starts Chromium and a sale)")
	}
	addr := freeAddr(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	bctx := browser.Open(ctx, t, 1280, 760)

	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"--strategies", "sql-atomic", "--users", "160", "--stock", "20", "--rate", "100",
			"--stall-rate", "0", "--pay", "0.7", "--pay-within", "600ms", "--live-addr", addr, "--out", out}, io.Discard, io.Discard)
	}()
	url := "http://" + addr + "/"
	waitServing(t, url, exit)
	if err := chromedp.Run(bctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}

	// While it runs: the paid and returned units on the card, sampled.
	paid, returned := map[string]bool{}, map[string]bool{}
	for done := false; !done; {
		var p, r, state string
		err := chromedp.Run(bctx,
			chromedp.Evaluate(`document.querySelector('[data-l="paid"]')?.dataset.value ?? ""`, &p),
			chromedp.Evaluate(`document.querySelector('[data-l="returned"]')?.dataset.value ?? ""`, &r),
			chromedp.Evaluate(`document.body.dataset.done ?? ""`, &state))
		if err != nil {
			t.Fatalf("read the page: %v", err)
		}
		if done = state == "true"; !done {
			paid[p], returned[r] = true, true
			select {
			case <-ctx.Done():
				t.Fatalf("the page never said the run was done (paid seen: %v)", paid)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	delete(paid, "")
	delete(returned, "")
	if len(paid) < 2 || len(returned) < 2 {
		t.Errorf("while the sale ran, paid took the values %v and returned %v: want each to move", paid, returned)
	}
	shoot(t, bctx, "live-pay.png")

	var page map[string]string
	err := chromedp.Run(bctx, chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('[data-l]')].map(e => [e.dataset.l, e.dataset.value]))`, &page))
	if err != nil {
		t.Fatal(err)
	}
	if code := <-exit; code != exitOK {
		t.Fatalf("loadgen exit %d", code)
	}
	m := readReport(t, out).Strategies[0]
	l := m.Audit.Life
	if l == nil {
		t.Fatal("report.json: no life in the audit")
	}
	want := map[string]int64{"paid": int64(l.Paid), "pending": int64(l.Pending), "expired": int64(l.Expired),
		"returned": m.Events.Returned, "resold": int64(l.Resold), "undersold": int64(l.Undersold)}
	for k, w := range want {
		if got, err := strconv.ParseInt(page[k], 10, 64); err != nil || got != w {
			t.Errorf("%s: page shows %q, report.json says %d", k, page[k], w)
		}
	}
}
