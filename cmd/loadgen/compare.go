package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/flashsale/flashsale/internal/harness/report"
)

const compareUsage = `Usage: loadgen compare A/report.json B/report.json

Prints, per strategy, each figure of run A beside run B's with the change.
Where a run was made with --count, a figure is the median of its runs, and
the change is marked "outside the spread" when the two runs' min–max ranges
do not overlap, "within the spread" when they do: a change within the
spread is what running again already varies by. A folder may be given for
its report.json, and "latest" works: loadgen compare old loadgen-report/latest.
`

// compare is the compare subcommand: it returns the exit code (0, or 2 for
// bad arguments or unreadable reports).
func compare(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, compareUsage)
		return exitOK
	}
	if len(args) != 2 {
		fmt.Fprintf(stderr, "loadgen compare: want two reports, got %d arguments\n%s", len(args), compareUsage)
		return exitUsage
	}
	var docs [2]report.Document
	for i, p := range args {
		d, err := readReportFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "loadgen compare: %v\n", err)
			return exitUsage
		}
		docs[i] = d
	}
	writeComparison(stdout, args, docs[0], docs[1])
	return exitOK
}

// readReport reads report.json at path, or in the folder path.
func readReportFile(path string) (report.Document, error) {
	var d report.Document
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = strings.TrimRight(path, "/") + "/" + report.JSONFile
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("%s: not a loadgen report.json: %v", path, err)
	}
	if len(d.Strategies) == 0 && d.Sweep == nil {
		return d, fmt.Errorf("%s: no rows to compare", path)
	}
	return d, nil
}

// figure is one figure of one row: its value (the median with --count)
// and, with --count, its range.
type figure struct {
	v, lo, hi float64
	spread    bool
	ok        bool
}

func figureOf(m report.StrategyDoc, name string) figure {
	if s, ok := m.Spread[name]; ok {
		return figure{v: s.Median, lo: s.Min, hi: s.Max, spread: true, ok: true}
	}
	v, ok := m.Figures[name]
	return figure{v: v, lo: v, hi: v, ok: ok}
}

// writeComparison prints A and B side by side, row by row, in A's order
// and then B's rows that A lacks.
func writeComparison(w io.Writer, paths []string, a, b report.Document) {
	fmt.Fprintf(w, "A: %s (%s, runs per row %d)\nB: %s (%s, runs per row %d)\n",
		paths[0], a.GeneratedAt.Format("2006-01-02 15:04:05"), a.Settings.Count, paths[1], b.GeneratedAt.Format("2006-01-02 15:04:05"), b.Settings.Count)
	if a.Sweep != nil || b.Sweep != nil {
		fmt.Fprintln(w, "(a --sweep report has no rows of its own: compare its report.json's sweep section by eye, or compare two runs at one --rate)")
	}
	byMode := func(d report.Document) map[string]report.StrategyDoc {
		m := map[string]report.StrategyDoc{}
		for _, r := range d.Strategies {
			m[r.Strategy] = r
		}
		return m
	}
	am, bm := byMode(a), byMode(b)
	var order []string
	for _, r := range a.Strategies {
		order = append(order, r.Strategy)
	}
	for _, r := range b.Strategies {
		if _, ok := am[r.Strategy]; !ok {
			order = append(order, r.Strategy)
		}
	}
	for _, strategy := range order {
		ar, inA := am[strategy]
		br, inB := bm[strategy]
		fmt.Fprintf(w, "\n%s\n", strategy)
		if !inA || !inB {
			fmt.Fprintf(w, "  only in %s\n", map[bool]string{true: "A", false: "B"}[inA])
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  figure\tA\tB\tchange\t")
		for _, f := range report.Figures {
			x, y := figureOf(ar, f.Name), figureOf(br, f.Name)
			if !x.ok || !y.ok {
				continue
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", f.Name, cell(x), cell(y), change(x.v, y.v), verdict(x, y))
		}
		tw.Flush()
	}
}

// cell renders a figure: "412", or "412 (398–430)" with a spread.
func cell(f figure) string {
	s := trim(f.v)
	if f.spread && f.lo != f.hi {
		s += " (" + trim(f.lo) + "–" + trim(f.hi) + ")"
	}
	return s
}

func trim(v float64) string {
	if v == math.Trunc(v) || math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// change is B against A: "+10.4%", or the difference where A is 0.
func change(a, b float64) string {
	switch {
	case a == b:
		return "="
	case a == 0:
		return fmt.Sprintf("%+g", b-a)
	}
	return fmt.Sprintf("%+.1f%%", 100*(b-a)/math.Abs(a))
}

// verdict says whether a change is outside the runs' spread: only when
// at least one run has --count data.
func verdict(a, b figure) string {
	switch {
	case !a.spread && !b.spread || a.v == b.v:
		return ""
	case b.lo > a.hi || b.hi < a.lo:
		return "outside the spread"
	}
	return "within the spread"
}
