package report

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/webfont"
)

// pages are the outcomes whose report.html the page's tests read: every
// kind of run the load generator reports.
func pages() map[string]*scenario.Outcome {
	return map[string]*scenario.Outcome{
		"default": fleetOutcome(), "sweep": fleetSweep(), "count": fleetCount(), "crash": fleetCrash(),
		"clean": fleetClean(), "restart": fleetRestart(), "small": outcome(), "small sweep": sweepOutcome(),
		"catalogue": fleetCatalogue(), "pay": fleetPay(),
	}
}

// render is o's report.html.
func render(t *testing.T, o *scenario.Outcome) string {
	t.Helper()
	var b bytes.Buffer
	if err := writeHTML(&b, o); err != nil {
		t.Fatalf("writeHTML: %v", err)
	}
	return b.String()
}

// elements returns what lies between each <tag and its </tag> in page.
func elements(page, tag string) []string {
	var out []string
	for _, part := range strings.Split(page, "<"+tag)[1:] {
		inner, _, _ := strings.Cut(part, "</"+tag+">")
		out = append(out, inner)
	}
	return out
}

var (
	dataMark  = regexp.MustCompile(`<(rect|circle|polyline|path)\b[^>]*\bclass="mark"`)
	sectionOf = regexp.MustCompile(`(?s)<h2>(.*?)</h2>(.*?)(?:<h2>|</body>)`)
)

// No report draws an empty chart, prints a table of headers only, or
// leaves a heading with nothing under it.
func TestReportHasNoEmptyChartOrTable(t *testing.T) {
	for name, o := range pages() {
		t.Run(name, func(t *testing.T) {
			page := render(t, o)
			svgs := elements(page, "svg")
			if len(svgs) == 0 {
				t.Errorf("got no chart, want at least one")
			}
			for _, svg := range svgs {
				if !dataMark.MatchString(svg) {
					title, _, _ := strings.Cut(svg, "</title>")
					t.Errorf("chart %q has no data mark", title[strings.Index(title, "<title>")+len("<title>"):])
				}
			}
			for i, table := range elements(page, "table") {
				if !strings.Contains(table, "<td") {
					t.Errorf("table %d has no cell, only headers", i+1)
				}
			}
			for _, s := range sectionOf.FindAllStringSubmatch(page, -1) {
				if !strings.ContainsAny(s[2], "<") || strings.TrimSpace(s[2]) == "" {
					t.Errorf("section %q is empty", s[1])
				}
			}
		})
	}
}

// A sweep's page shows the sweep, goodput first, and says in one line why
// it has no per-strategy table or charts instead of drawing them empty.
func TestSweepPageShowsGoodputFirst(t *testing.T) {
	page := render(t, fleetSweep())
	goodput, p99 := strings.Index(page, "Goodput against the offered rate"), strings.Index(page, "p99 against the offered rate")
	if goodput < 0 || p99 < 0 || goodput > p99 {
		t.Errorf("goodput chart at %d, p99 chart at %d: want both, goodput first", goodput, p99)
	}
	for _, absent := range []string{"<h2>Per strategy</h2>", "<h2>Latency over time, per attack</h2>", "results-"} {
		if strings.Contains(page, absent) {
			t.Errorf("sweep page contains %q, want it left out", absent)
		}
	}
	if !strings.Contains(page, "drawn for runs at one rate") {
		t.Errorf("sweep page does not say why it has no per-strategy charts")
	}
	if got, want := strings.Count(page, `class="guide"><title>y = x`), 1; got != want {
		t.Errorf("y = x guides: got %d, want %d", got, want)
	}
	// lua (capacity 700/s) and redis-queue (900/s) pass 100 ms at 1,000/s,
	// redis-decr (1,200/s), off and fenced+batch at 2,000/s; sql-atomic never.
	if got, want := strings.Count(page, `class="knee"`), 2*5; got != want {
		t.Errorf("knee rings: got %d, want %d (one per row that passed %d ms, on both charts)", got, want, kneeMs)
	}
	if !strings.Contains(page, "<b>sql-atomic</b>: p99 stayed under 100ms up to 2000/s offered; peak ") {
		t.Errorf("sweep page lacks sql-atomic's knee line")
	}
}

// A default run with nothing oversold says so instead of drawing an audit
// chart of zero-height bars; a row that sent nothing says so instead of
// drawing an empty scatter.
func TestPageSaysWhatItLeftOut(t *testing.T) {
	page := render(t, fleetClean())
	if strings.Contains(page, "Oversold units and duplicate orders (audit)") || !strings.Contains(page, "No row oversold a unit") {
		t.Errorf("clean run: want the audit chart left out, and a line saying why")
	}
	page = render(t, fleetCrash())
	if got, want := strings.Count(page, "latency of each request over time</text>"), len(fleetCrash().Strategies)-1; got != want {
		t.Errorf("crash run: got %d scatters, want %d (etcd sent nothing)", got, want)
	}
	if !strings.Contains(page, "etcd sent no requests") {
		t.Errorf("crash run: no line says etcd's scatter is left out")
	}
	if got, want := strings.Count(page, ">shop 2 killed</text>"), len(fleetCrash().Strategies)-1; got != want {
		t.Errorf("crash run: %d kill lines, want one per scatter (%d)", got, want)
	}
	if got := strings.Count(render(t, fleetRestart()), ">3 node(s) restarted empty</text>"); got != 2 {
		t.Errorf("restart run: %d restart lines, want one per scatter (2)", got)
	}
}

// Red marks what is wrong and nothing else: off's and naive's oversold,
// a --count row's orders when a run lost some; never a row's plain orders.
func TestPageMarksOnlyWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    *scenario.Outcome
		want []string // strategy/column of every red cell
	}{
		{"default", fleetOutcome(), []string{"off/oversold", "naive/oversold"}},
		{"clean", fleetClean(), nil},
		{"count", fleetCount(), []string{"off/oversold", "naive/oversold", "lua/orders"}},
		{"crash", fleetCrash(), []string{"off/oversold", "naive/oversold", "redis-decr/orders"}},
		{"restart", fleetRestart(), []string{"redlock/oversold"}},
		{"small", outcome(), []string{"off/oversold", "off/consistent", "redlock/dup_orders"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for r, row := range tableCells(tc.o) {
				for i, c := range row {
					if c.Wrong != "" {
						got = append(got, string(tc.o.Strategies[r].Strategy)+"/"+Columns[i])
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("red cells: got %v, want %v", got, tc.want)
			}
			if got, want := strings.Count(render(t, tc.o), `class="bad"`), len(tc.want); got != want {
				t.Errorf("page: got %d cells of class bad, want %d", got, want)
			}
		})
	}
	var red []string
	for _, row := range sweepCells(fleetSweep()) {
		for _, c := range row {
			if c.Wrong != "" {
				red = append(red, c.Text)
			}
		}
	}
	if len(red) != 0 {
		t.Errorf("sweep with nothing oversold: red cells %v, want none", red)
	}
}

// The title does not lean on a CJK font: the Latin name comes first, the
// page names fonts that have the characters, and carries its own 双 for a
// machine with none of them.
func TestTitleReadsWithoutCJKFonts(t *testing.T) {
	page := render(t, outcome())
	if !strings.Contains(page, "<h1>Double 11 (双11)") {
		t.Errorf("title: want the Latin name first")
	}
	if !strings.Contains(page, webfont.FaceCSS) {
		t.Errorf("page: want webfont's @font-face in its style")
	}
	if !strings.Contains(page, `"Noto Sans CJK SC"`) || !strings.Contains(page, `"`+webfont.Family+`", sans-serif;`) {
		t.Errorf("font stack: want a CJK face, then webfont's, before the generic sans-serif")
	}
}
