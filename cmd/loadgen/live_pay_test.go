package main

import (
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
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
	// Every value the card shows for paid and returned while its row runs,
	// in order: recorded by the page itself at each change, from before its
	// first event, so that nothing depends on how often this test looks.
	if err := chromedp.Run(bctx,
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(recordLives).Do(ctx)
			return err
		}),
		chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	if err := chromedp.Run(bctx, chromedp.WaitVisible(`body[data-done="true"]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("the page never said the run was done: %v", err)
	}
	var seen map[string][]string
	if err := chromedp.Run(bctx, chromedp.Evaluate(`window.lives`, &seen)); err != nil {
		t.Fatalf("read the values the page showed: %v", err)
	}
	t.Logf("while the sale ran, the page showed paid %q and returned %q", seen["paid"], seen["returned"])
	// The units are paid and returned over more than one pay window (a
	// unit returned is sold again, and its new order ends a window later):
	// a page that shows the sale live shows each figure at two values at
	// least while the row runs.
	for _, k := range []string{"paid", "returned"} {
		distinct := map[string]bool{}
		for _, v := range seen[k] {
			if v != "" {
				distinct[v] = true
			}
		}
		if len(distinct) < 2 {
			t.Errorf("while the sale ran, %s showed %q: want it to move", k, seen[k])
		}
	}
	shoot(t, bctx, "live-pay.png")

	var shown map[string]string
	err := chromedp.Run(bctx, chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('[data-l]')].map(e => [e.dataset.l, e.dataset.value]))`, &shown))
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
		if got, err := strconv.ParseInt(shown[k], 10, 64); err != nil || got != w {
			t.Errorf("%s: page shows %q, report.json says %d", k, shown[k], w)
		}
	}
}

// recordLives runs in the live page before its own script: it keeps in
// window.lives every value the first card's paid and returned take while
// the card's row is running, each change once.
const recordLives = `window.lives = {paid: [], returned: []};
new MutationObserver(() => {
  const c = document.querySelector(".card");
  if (!c || !c.classList.contains("running")) return;
  for (const k of ["paid", "returned"]) {
    const v = c.querySelector('[data-l="' + k + '"]')?.dataset.value ?? "";
    const l = window.lives[k];
    if (l[l.length - 1] !== v) l.push(v);
  }
}).observe(document, {subtree: true, childList: true, attributes: true});`
