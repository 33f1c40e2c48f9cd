package report

import (
	"fmt"
	"html/template"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A sale with payments' page adds what report.md adds: the second table
// (LifeRows), under the first, with the same red for a broken promise.

// htmlLife is the page's table of what became of the orders after the
// click; nil for a run without a pay window.
type htmlLife struct {
	Intro   string
	Columns []template.HTML
	Rows    [][]htmlCell
}

// lifeIntro says what the columns count, as report.md's line does.
const lifeIntro = "After the click (a pay window): units paid, pending, expired, returned to sale, sold again, " +
	"and neither sold nor on sale at the end (undersold); pay_ok and pay_late are the payers' 200s and 409 expired."

// newHTMLLife is o's second table; nil if no row had a pay window.
func newHTMLLife(o *scenario.Outcome) *htmlLife {
	rows := LifeRows(o)
	if len(rows) == 0 {
		return nil
	}
	l := &htmlLife{Intro: lifeIntro, Columns: headers(LifeColumns)}
	i := 0
	for _, m := range o.Strategies {
		if m.Audit.Life == nil {
			continue
		}
		wrong := lifeWrong(m)
		var cells []htmlCell
		for j, c := range rows[i] {
			cells = append(cells, htmlCell{Text: c, Wrong: wrong[LifeColumns[j]]})
		}
		l.Rows = append(l.Rows, cells)
		i++
	}
	return l
}

// lifeWrong says, by column, why a cell of m's life row is wrong: a unit
// neither sold nor back on sale, or more units returned than orders that
// ended unpaid (a unit returned twice). Fewer returned is not marked: a
// shop killed mid-sale takes its counts with it.
func lifeWrong(m *scenario.StrategyResult) map[string]string {
	l, wrong := m.Audit.Life, map[string]string{}
	if l.Undersold > 0 {
		wrong["undersold"] = fmt.Sprintf("%s neither sold nor back on sale", plural(l.Undersold, "unit", "units"))
	}
	if ended := int64(l.Expired + l.Cancelled); m.Events.Returned > ended {
		wrong["returned"] = fmt.Sprintf("%d units returned for %d orders expired or cancelled: a unit returned twice", m.Events.Returned, ended)
	}
	return wrong
}
