package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// A catalogue's page adds what report.md adds: each row's products, one
// table per row folded under the line that says how many came out exact
// (unfolded when one did not), and where each row's load landed on a
// Redis Cluster.

// htmlCatalogue is the page's per-product section.
type htmlCatalogue struct {
	Intro   string
	Columns []template.HTML
	Rows    []htmlProducts
}

// htmlProducts is one row's products: Summary says how many were exact,
// Open whether the table starts unfolded (a product was not exact).
type htmlProducts struct {
	Strategy, Summary string
	Open              bool
	Cells             [][]htmlCell
}

// newHTMLCatalogue is o's per-product section; nil for one product.
func newHTMLCatalogue(o *scenario.Outcome) *htmlCatalogue {
	if !o.Settings.Catalogue() {
		return nil
	}
	c := &htmlCatalogue{Intro: catalogueIntro(o.Settings), Columns: headers(CatalogueColumns)}
	for _, m := range o.Strategies {
		c.Rows = append(c.Rows, htmlProducts{
			Strategy: string(m.Strategy), Summary: exactLine(m),
			Open:  exactCount(m) < len(m.Products),
			Cells: productCells(m),
		})
	}
	return c
}

// productCells are CatalogueRows(m) as the page shows them, each product's
// broken promises red, and its exact "no" red with the reasons.
func productCells(m *scenario.StrategyResult) [][]htmlCell {
	rows := CatalogueRows(m)
	out := make([][]htmlCell, len(rows))
	for r, row := range rows {
		wrong := productWrong(m.Products[r])
		for i, c := range row {
			out[r] = append(out[r], htmlCell{Text: c, Wrong: wrong[CatalogueColumns[i]]})
		}
	}
	return out
}

// productWrong says, by column, why a cell of p's line is wrong.
func productWrong(p tally.ProductFigures) map[string]string {
	a := p.Audit
	wrong := map[string]string{}
	if a.Oversold > 0 {
		wrong["oversold"] = fmt.Sprintf(oversoldWhy, a.Oversold)
	}
	if a.DuplicateOrders > 0 {
		wrong["dup_orders"] = dupWhy(a.DuplicateOrders)
	}
	if !a.Consistent {
		wrong["consistent"] = consistentWhy
	}
	if a.Drift != nil && *a.Drift != 0 {
		wrong["drift"] = "Redis's stock and the database's disagree"
	}
	if p.Lost > 0 {
		wrong["lost"] = lostWhy(p.Lost)
	}
	if p.EarlySoldOut > 0 {
		wrong["early_sold_out"] = fmt.Sprintf("%s told sold out while a unit was left", plural(p.EarlySoldOut, "buyer", "buyers"))
	}
	if !p.Exact() {
		why := make([]string, 0, len(wrong))
		for _, col := range CatalogueColumns {
			if wrong[col] != "" {
				why = append(why, wrong[col])
			}
		}
		wrong["exact"] = strings.Join(why, "; ")
	}
	return wrong
}
