package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// On the page, colour marks what is wrong and nothing else: a cell is red
// when the figure in it is a broken promise of the shop (a unit sold
// twice, a buyer with two orders, an audit that does not add up, a buyer
// told "ordered" whose order was never written, a queue that never
// drained), and plain otherwise, however large or small it is. Errors and
// 503s are not marked: refusing a click under load is an answer, not a
// wrong one.

// htmlCell is one table cell of the page: Text, the min–max of a --count
// row's runs in Spread ("" for a row run once), and in Wrong why the cell
// is red ("" when it is not).
type htmlCell struct {
	Text, Spread, Wrong string
}

// tableCells are Rows(o) as the page shows them: each cell with its
// spread apart, and the cells that are wrong marked.
func tableCells(o *scenario.Outcome) [][]htmlCell {
	rows := Rows(o)
	out := make([][]htmlCell, len(rows))
	for r, row := range rows {
		m := o.Strategies[r]
		wrong := wrongCells(m)
		for i, c := range row {
			cell := htmlCell{Text: c, Wrong: wrong[Columns[i]]}
			if len(m.Runs) > 1 && strings.HasSuffix(c, ")") {
				if text, spread, ok := strings.Cut(c, " ("); ok {
					cell.Text, cell.Spread = text, strings.TrimSuffix(spread, ")")
				}
			}
			out[r] = append(out[r], cell)
		}
	}
	return out
}

// The titles of red cells, on the table and on a catalogue's products.
const (
	oversoldWhy   = "sold %d more units than the stock"
	consistentWhy = "stock left + sold is not the initial stock"
)

// dupWhy is the title of a red dup_orders cell.
func dupWhy(n int) string { return plural(n, "buyer holds", "buyers hold") + " more than one order" }

// lostWhy is the title of a red cell of answered orders not written.
func lostWhy(n int) string {
	return fmt.Sprintf("%s answered 201 or 202 without an order", plural(n, "buyer", "buyers"))
}

// wrongCells says, by column, why a cell of m's row is wrong, looking at
// every run of a --count row: one run that oversold is an oversell.
func wrongCells(m *scenario.StrategyResult) map[string]string {
	runs := m.Runs
	if len(runs) == 0 {
		runs = []*scenario.StrategyResult{m}
	}
	most := func(f func(*scenario.StrategyResult) int) int {
		n := 0
		for _, r := range runs {
			n = max(n, f(r))
		}
		return n
	}
	wrong := map[string]string{}
	if n := most(func(r *scenario.StrategyResult) int { return r.Audit.Oversold }); n > 0 {
		wrong["oversold"] = fmt.Sprintf(oversoldWhy, n)
	}
	if n := most(func(r *scenario.StrategyResult) int { return r.Audit.DuplicateOrders }); n > 0 {
		wrong["dup_orders"] = dupWhy(n)
	}
	if slices.ContainsFunc(runs, func(r *scenario.StrategyResult) bool { return !r.Audit.Consistent }) {
		wrong["consistent"] = consistentWhy
	}
	if n := most(func(r *scenario.StrategyResult) int { return r.Lost }); n > 0 {
		wrong["orders"] = lostWhy(n)
	}
	if i := slices.IndexFunc(runs, func(r *scenario.StrategyResult) bool { return r.Drain != nil && r.Drain.Err != "" }); i >= 0 {
		wrong["drain"] = "the queue did not drain: " + runs[i].Drain.Err
	}
	return wrong
}

// plural is n and one or many, as n asks: "1 buyer", "2 buyers".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// sweepCells are SweepRows(o) as the page shows them, an oversold cell
// marked.
func sweepCells(o *scenario.Outcome) [][]htmlCell {
	var points []SweepPointDoc
	for _, r := range newSweepDoc(o).Rows {
		points = append(points, r.Points...)
	}
	col := slices.Index(SweepColumns, "oversold")
	out := make([][]htmlCell, 0, len(points))
	for i, row := range SweepRows(o) {
		cells := make([]htmlCell, len(row))
		for j, c := range row {
			cells[j].Text = c
		}
		if n := points[i].Oversold; n > 0 {
			cells[col].Wrong = fmt.Sprintf(oversoldWhy, n)
		}
		out = append(out, cells)
	}
	return out
}
