// Package browser starts the headless Chromium that the browser tests
// drive with chromedp (the live page's, the report's), so that they find
// it, skip without it and start it the same way.
//
// FLASHSALE_TEST_CHROMIUM names the binary to drive; otherwise the first
// Chromium or Chrome on PATH is. Without one a test skips, saying why,
// unless FLASHSALE_TEST_REQUIRE_BROWSER is set (.ci/run sets it, after
// installing Debian's chromium): then it fails.
package browser

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path returns the browser to drive, or skips tb (fails it, if
// FLASHSALE_TEST_REQUIRE_BROWSER is set) when there is none.
func Path(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("FLASHSALE_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on PATH (install Debian's chromium, or set FLASHSALE_TEST_CHROMIUM to a Chrome or Chromium binary)"
	if os.Getenv("FLASHSALE_TEST_REQUIRE_BROWSER") != "" {
		tb.Fatal(msg + ", and FLASHSALE_TEST_REQUIRE_BROWSER is set")
	}
	tb.Skip(msg)
	return ""
}

// Open starts the browser (Path) headless with a window width × height
// pixels, on about:blank, and returns the chromedp context of its one tab.
// The browser stops when ctx ends or tb's cleanup runs; a browser that
// does not start fails tb.
func Open(ctx context.Context, tb testing.TB, width, height int) context.Context {
	tb.Helper()
	path := Path(tb)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(width, height))...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	tb.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Run(bctx, chromedp.Navigate("about:blank")); err != nil {
		tb.Fatalf("start %s: %v", path, err)
	}
	return bctx
}
