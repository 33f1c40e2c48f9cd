package report

import (
	"slices"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// skippedRows are the table rows of the run's skipped strategies, in columns'
// order: the strategy, "skipped" in the next column, and "-" in the rest.
// Their why-lines (o.Skipped's Why) say what runs them.
func skippedRows(o *scenario.Outcome, columns []string) [][]string {
	rows := make([][]string, 0, len(o.Skipped))
	for _, s := range o.Skipped {
		row := append([]string{string(s.Strategy), "skipped"}, slices.Repeat([]string{"-"}, len(columns)-2)...)
		rows = append(rows, row)
	}
	return rows
}

// skippedWhy is a skipped strategy's why-line.
func skippedWhy(s scenario.Skipped) string { return "skipped: " + s.Why }

// htmlWhy is a why-line on the page.
type htmlWhy struct{ Strategy, Why string }

// skippedCells are skippedRows as the page's cells.
func skippedCells(o *scenario.Outcome) [][]htmlCell {
	var out [][]htmlCell
	for _, row := range skippedRows(o, Columns) {
		cells := make([]htmlCell, len(row))
		for i, c := range row {
			cells[i] = htmlCell{Text: c}
		}
		out = append(out, cells)
	}
	return out
}

// skippedWhys are the skipped strategies' why-lines for the page.
func skippedWhys(o *scenario.Outcome) []htmlWhy {
	var out []htmlWhy
	for _, s := range o.Skipped {
		out = append(out, htmlWhy{string(s.Strategy), skippedWhy(s)})
	}
	return out
}

// SkippedDoc is a skipped strategy in report.json.
type SkippedDoc struct {
	Strategy string `json:"strategy"`
	Why      string `json:"why"`
}
