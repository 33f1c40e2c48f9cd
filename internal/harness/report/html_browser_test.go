package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flashsale/flashsale/internal/harness/testenv/browser"
)

// pageLayout is what the browser test reads off a rendered report.
type pageLayout struct {
	ScrollWidth int `json:"scrollWidth"`
	InnerWidth  int `json:"innerWidth"`
	Charts      []struct {
		Title string `json:"title"`
		Marks int    `json:"marks"` // data marks that show: a bar of some height, a dot, a line
	} `json:"charts"`
	Tables []struct {
		Cells int     `json:"cells"`
		Right float64 `json:"right"` // the right edge of the table's box
		Width int     `json:"width"` // the table's own width
		BoxW  int     `json:"boxW"`  // the width its box shows
	} `json:"tables"`
}

// readLayout measures the page: the document's width against the
// window's, each chart's visible data marks, each table against its box.
const readLayout = `(() => ({
	scrollWidth: document.documentElement.scrollWidth,
	innerWidth: window.innerWidth,
	charts: [...document.querySelectorAll('svg')].map(s => ({
		title: s.querySelector('title')?.textContent ?? '',
		marks: [...s.querySelectorAll('.mark')].filter(m => {
			const b = m.getBBox();
			return m.tagName === 'rect' ? b.width > 0 && b.height > 0 : b.width > 0 || b.height > 0;
		}).length,
	})),
	tables: [...document.querySelectorAll('table')].map(t => ({
		cells: t.querySelectorAll('td').length,
		right: t.parentElement.getBoundingClientRect().right,
		width: t.scrollWidth,
		boxW: t.parentElement.clientWidth,
	})),
}))()`

// Every kind of report (pages), in headless Chromium at 1,280 pixels
// wide: every chart draws data, the page does not scroll sideways, and
// every table fits the page without scrolling in its box. Screenshots go
// to FLASHSALE_REPORT_SCREENSHOTS if set (report-<name>.png), else nowhere.
func TestReportInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the browser test (it starts Chromium)")
	}
	const width = 1280
	ctx := browser.Open(t.Context(), t, width, 900)
	for name, o := range pages() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, o); err != nil {
				t.Fatalf("Write: %v", err)
			}
			var got pageLayout
			err := chromedp.Run(ctx, chromedp.Navigate("file://"+filepath.Join(dir, HTMLFile)),
				chromedp.WaitReady("body"), chromedp.Evaluate(readLayout, &got))
			if err != nil {
				t.Fatalf("open the report: %v", err)
			}
			if got.InnerWidth != width {
				t.Fatalf("window: got %d px wide, want %d", got.InnerWidth, width)
			}
			if got.ScrollWidth > got.InnerWidth {
				t.Errorf("page: got %d px wide in a %d px window, want no sideways scrolling", got.ScrollWidth, got.InnerWidth)
			}
			if len(got.Charts) == 0 {
				t.Errorf("got no chart")
			}
			for _, c := range got.Charts {
				if c.Marks == 0 {
					t.Errorf("chart %q: got no visible data mark", c.Title)
				}
			}
			for i, tb := range got.Tables {
				if tb.Cells == 0 {
					t.Errorf("table %d: no cells", i+1)
				}
				if tb.Right > float64(got.InnerWidth) {
					t.Errorf("table %d: its box ends at %.0f px, past the window's %d", i+1, tb.Right, got.InnerWidth)
				}
				if tb.Width > tb.BoxW {
					t.Errorf("table %d: %d px wide in a %d px box, want it to fit without scrolling", i+1, tb.Width, tb.BoxW)
				}
			}
			if dir := os.Getenv("FLASHSALE_REPORT_SCREENSHOTS"); dir != "" {
				var png []byte
				if err := chromedp.Run(ctx, chromedp.Sleep(200*time.Millisecond), chromedp.FullScreenshot(&png, 100)); err != nil {
					t.Fatalf("screenshot: %v", err)
				}
				path := filepath.Join(dir, "report-"+strings.ReplaceAll(name, " ", "-")+".png")
				if err := os.WriteFile(path, png, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("screenshot: %s", path)
			}
		})
	}
}
