package report

import (
	"slices"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// withSpreads rewrites a row's cells, in Columns order, as the median with
// min–max over the row's --count runs (spreadCell): every column that is a
// Figure, and "errors" as a count. consistent says yes only if every run
// was. A row run once is left as it is.
func withSpreads(row []string, m *scenario.StrategyResult) {
	if len(m.Runs) < 2 {
		return
	}
	for i, col := range Columns {
		if f, ok := FigureNamed(col); ok {
			row[i] = spreadCell(f, m.Runs)
		}
	}
	if i := slices.Index(Columns, "consistent"); i >= 0 {
		all := !slices.ContainsFunc(m.Runs, func(r *scenario.StrategyResult) bool { return !r.Audit.Consistent })
		row[i] = yesNo(all)
	}
}
