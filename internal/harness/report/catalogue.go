package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A catalogue run (--products) sells several products per row. The main
// table's figures are then each product's figures summed
// (tally.SumAudits); report.md adds a table per row with every product
// on its own line, and the terminal one line that says how many of each
// row's products came out exact; report.html the same tables, each folded
// under that line (html_catalogue.go).

// CatalogueColumns are the per-product table's headers: the product, the
// crowd's share of it, its stock, the answers to its own clicks, and its
// own audit.
var CatalogueColumns = []string{"product", "buyers", "clicks", "stock", "sold (201+202)", "sold_out",
	"orders", "oversold", "dup_orders", "consistent", "drift", "lost", "early_sold_out", "exact"}

// catalogueTitle is the markdown title's tail for a catalogue ("" for one
// product): " over 20 products (Zipf 1.1)".
func catalogueTitle(s scenario.Settings) string {
	if !s.Catalogue() {
		return ""
	}
	return fmt.Sprintf(" over %d products (Zipf %g)", s.Products, s.Skew)
}

// catalogueFlags are the flags that repeat a catalogue ("" for one
// product).
func catalogueFlags(s scenario.Settings) string {
	if !s.Catalogue() {
		return ""
	}
	return fmt.Sprintf(" --products %d --skew %g", s.Products, s.Skew)
}

// exactCount is how many of m's products came out exact.
func exactCount(m *scenario.StrategyResult) int {
	n := 0
	for _, p := range m.Products {
		if p.Exact() {
			n++
		}
	}
	return n
}

// catalogueLine is the terminal's line under the table for a catalogue:
// what the figures are, and each row's exact products. "" for one product.
func catalogueLine(o *scenario.Outcome) string {
	if !o.Settings.Catalogue() {
		return ""
	}
	parts := make([]string, 0, len(o.Strategies))
	for _, m := range o.Strategies {
		parts = append(parts, fmt.Sprintf("%s %d/%d", m.Strategy, exactCount(m), len(m.Products)))
	}
	return fmt.Sprintf("%d products, Zipf %g: every figure is the products' sum. Exact products: %s. Each product: report.md.",
		o.Settings.Products, o.Settings.Skew, strings.Join(parts, ", "))
}

// CatalogueRows are one row's products in CatalogueColumns order, hottest
// first.
func CatalogueRows(m *scenario.StrategyResult) [][]string {
	rows := make([][]string, 0, len(m.Products))
	for _, p := range m.Products {
		a := p.Audit
		drift := "-"
		if a.Drift != nil {
			drift = strconv.Itoa(*a.Drift)
		}
		rows = append(rows, []string{
			shortID(p.ID), strconv.Itoa(p.Buyers), strconv.Itoa(p.Clicks), strconv.Itoa(a.InitialStock),
			strconv.Itoa(p.Tally.Accepted()), strconv.Itoa(p.Tally.SoldOut),
			strconv.Itoa(a.Orders), strconv.Itoa(a.Oversold), strconv.Itoa(a.DuplicateOrders),
			yesNo(a.Consistent), drift, strconv.Itoa(p.Lost), strconv.Itoa(p.EarlySoldOut), yesNo(p.Exact()),
		})
	}
	return rows
}

// shortID is a catalogue product's own part of its id, "p01" of
// "d11-<run>-<row>-p01".
func shortID(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 {
		return id[i+1:]
	}
	return id
}

// catalogueIntro says what a catalogue's per-product tables are, for
// report.md and report.html alike.
func catalogueIntro(s scenario.Settings) string {
	return fmt.Sprintf("The table above sums %d products; --stock %d is split evenly over them, and each buyer wants one, drawn from a Zipf law of exponent %g (product p01 the hottest; each product's id is its row's, then -p01, -p02...). Each product is audited alone, from its own orders and its own buyers' answers; a product is exact when it oversold nothing, duplicated no order, is consistent, left no drift, lost no answered order and told no buyer \"sold out\" while a unit was left (early_sold_out).",
		s.Products, s.Stock, s.Skew)
}

// exactLine is a row's heading in the per-product section: "18 of 20
// products exact".
func exactLine(m *scenario.StrategyResult) string {
	return fmt.Sprintf("%d of %d products exact", exactCount(m), len(m.Products))
}

// writeCatalogueMarkdown writes report.md's per-product section: for each
// row, how many products were exact and the CatalogueColumns table.
// Nothing for one product.
func writeCatalogueMarkdown(b *strings.Builder, o *scenario.Outcome) {
	if !o.Settings.Catalogue() {
		return
	}
	fmt.Fprintf(b, "\n## Each product\n\n%s\n", catalogueIntro(o.Settings))
	for _, m := range o.Strategies {
		fmt.Fprintf(b, "\n### %s: %s\n\n", m.Strategy, exactLine(m))
		markdownTable(b, CatalogueColumns, CatalogueRows(m))
	}
}
