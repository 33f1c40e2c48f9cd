package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A terminal gets the run in TerminalWidth columns: the columns that tell
// the lesson (did it oversell, did it duplicate, what did the guard cost)
// and one line per strategy, cut at a word. report.md keeps every column
// and every why-line whole, and so does WriteWideText.

// TerminalWidth is the widest line WriteText prints, in terminal columns.
const TerminalWidth = 120

// TerminalColumns are the terminal table's headers: Columns' lesson, with
// sold standing for 201 and 202 together (a queued order is a sale) and
// errors, the price a lock pays in refused clicks, last.
var TerminalColumns = []string{"strategy", "sold", "oversold", "dup_orders", "consistent", "orders/s", "p99", "errors"}

// errorsWidth caps the terminal's errors cell: a run that drew many kinds
// of errors shows the first few, and report.md shows them all.
const errorsWidth = 24

// soldFigure is the terminal's sold column: answers 201 and 202.
var soldFigure = Figure{Name: "sold", of: func(m *scenario.StrategyResult) float64 {
	return float64(m.Tally.Created + m.Tally.Queued)
}}

// TerminalRows returns the terminal table's cells, one row per strategy, in
// TerminalColumns order, taken from Rows (so a --count row shows the same
// median and min–max).
func TerminalRows(o *scenario.Outcome) [][]string {
	full := Rows(o)
	rows := make([][]string, len(full))
	for i, m := range o.Strategies {
		for _, col := range TerminalColumns {
			var cell string
			switch col {
			case "sold":
				cell = strconv.FormatFloat(soldFigure.Of(m), 'f', 0, 64)
				if len(m.Runs) >= 2 {
					cell = spreadCell(soldFigure, m.Runs)
				}
			case "errors":
				cell = Clip(full[i][slices.Index(Columns, col)], errorsWidth)
			default:
				cell = full[i][slices.Index(Columns, col)]
			}
			rows[i] = append(rows[i], cell)
		}
	}
	return rows
}

// WriteText writes the run for a terminal in TerminalWidth columns: the
// TerminalColumns table, a line that says where the rest is, then one
// why-line per strategy cut to fit, and the unsafe strategies if any. A sweep
// writes its table and its knee and held lines, cut the same way.
func WriteText(w io.Writer, o *scenario.Outcome) error {
	return writeText(w, o, false)
}

// WriteWideText writes what WriteText does, with every column of Columns
// and every line whole: as wide as the run needs.
func WriteWideText(w io.Writer, o *scenario.Outcome) error {
	return writeText(w, o, true)
}

func writeText(w io.Writer, o *scenario.Outcome, wide bool) error {
	var b strings.Builder
	fit := func(line string) string {
		if wide {
			return line
		}
		return Clip(line, TerminalWidth)
	}
	if len(o.Sweep) > 0 {
		writeSweepText(&b, o, fit)
	} else {
		if wide {
			writeAligned(&b, Columns, append(Rows(o), skippedRows(o, Columns)...), false)
		} else {
			writeAligned(&b, TerminalColumns, append(TerminalRows(o), skippedRows(o, TerminalColumns)...), false)
			b.WriteString("sold: answered 201 or 202. Every column and whole why-lines: report.md, or --wide.\n")
		}
		if !o.Settings.Part.Whole() {
			b.WriteString(PartAudit + " (oversold, dup_orders, consistent: -)\n")
		}
		writeLifeText(&b, o)
		if line := catalogueLine(o); line != "" {
			for _, l := range Wrap(line, TerminalWidth) {
				b.WriteString(l + "\n")
			}
		}
		b.WriteString("\n")
		for _, m := range o.Strategies {
			b.WriteString(fit(fmt.Sprintf("%-11s %s", string(m.Strategy)+":", m.Why)) + "\n")
		}
		for _, sk := range o.Skipped {
			b.WriteString(fit(fmt.Sprintf("%-11s %s", string(sk.Strategy)+":", skippedWhy(sk))) + "\n")
		}
	}
	if bad := o.Unsafe(); len(bad) > 0 {
		fmt.Fprintf(&b, "\nUNSAFE: a safe strategy oversold or duplicated:\n  %s\n", strings.Join(bad, "\n  "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAligned writes header and rows aligned with spaces: the first
// column left-aligned, every other right-aligned, two spaces apart. With
// grouped, a blank line comes before a row whose first cell is not the
// one above's (a sweep's points, grouped by row).
func writeAligned(b *strings.Builder, header []string, rows [][]string, grouped bool) {
	rows = append([][]string{header}, rows...)
	widths := make([]int, len(header))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for n, r := range rows {
		if grouped && n > 1 && r[0] != rows[n-1][0] {
			b.WriteString("\n")
		}
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
	}
}

// Clip returns s if it fits in width terminal columns (see Columns),
// or else s cut at the last space that leaves room for an ellipsis,
// without the punctuation before the cut, and "…". A word longer than
// half the width is cut where it stands.
func Clip(s string, width int) string {
	if ColumnsOf(s) <= width {
		return s
	}
	var cut []rune
	used := 0
	for _, r := range s {
		if used+runeColumns(r) > width-1 {
			break
		}
		cut = append(cut, r)
		used += runeColumns(r)
	}
	if i := strings.LastIndexByte(string(cut), ' '); i > len(string(cut))/2 {
		cut = []rune(string(cut)[:i])
	}
	return strings.TrimRight(string(cut), " ,;:") + "…"
}

// Wrap breaks s at spaces into lines of at most width terminal columns,
// for prose that must be read whole (the run's title). A word wider than
// width stands on a line of its own.
func Wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case ColumnsOf(line)+1+ColumnsOf(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// ColumnsOf is how many terminal columns s takes: one per character, two
// for the wide characters of East Asian scripts (the 双 of 双11).
func ColumnsOf(s string) int {
	n := 0
	for _, r := range s {
		n += runeColumns(r)
	}
	return n
}

// runeColumns is one, or two for a character in the CJK and Hangul
// blocks and the full-width forms, which terminals draw two columns wide.
func runeColumns(r rune) int {
	switch {
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6:
		return 2
	}
	return 1
}
