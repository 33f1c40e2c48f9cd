package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// A catalogue's report.md has a table per row with each product on its own
// line, and the terminal one line of exact products; report.json carries
// each product. A run of one product has none of it.
func TestCatalogueReport(t *testing.T) {
	o := outcome()
	var plain bytes.Buffer
	if err := writeMarkdown(&plain, o); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "Each product") || strings.Contains(plain.String(), "--products") {
		t.Errorf("one product's report.md speaks of a catalogue:\n%s", plain.String())
	}

	o.Settings.Products, o.Settings.Skew = 2, 1.1
	for _, m := range o.Strategies {
		m.Products = []tally.ProductFigures{
			{ID: m.ProductID + "-p01", Buyers: 3, Clicks: 4, Audit: tally.Audit{InitialStock: 1, Orders: 2, Sold: 2, Oversold: 1, Consistent: true}},
			{ID: m.ProductID + "-p02", Buyers: 1, Clicks: 1, Audit: tally.Audit{InitialStock: 1, Orders: 1, Sold: 1, Consistent: true}},
		}
	}
	var text, md bytes.Buffer
	if err := WriteText(&text, o); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Exact products: off 1/2, redlock 1/2.") {
		t.Errorf("terminal lacks the exact products:\n%s", text.String())
	}
	for _, want := range []string{"over 2 products (Zipf 1.1)", "## Each product", "### off: 1 of 2 products exact",
		"| p01 | 3 | 4 | 1 | 0 | 0 | 2 | 1 | 0 | yes | - | 0 | 0 | no |", "--products 2 --skew 1.1"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	b, err := json.Marshal(NewDocument(o))
	if err != nil {
		t.Fatal(err)
	}
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Strategies[0].Products) != 2 || doc.Strategies[0].Products[0].Audit.Oversold != 1 || doc.Settings.Products != 2 {
		t.Errorf("report.json products %+v, settings %+v", doc.Strategies[0].Products, doc.Settings)
	}
}

// Where the load landed is a line per row in report.md and each row's
// masters in report.json, on a cluster only.
func TestMastersReport(t *testing.T) {
	o := outcome()
	var md bytes.Buffer
	if err := writeMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "load landed") {
		t.Errorf("no cluster, yet a load section:\n%s", md.String())
	}
	o.Strategies[0].Load = []tally.MasterLoad{{Addr: "h:1", Commands: 300, Share: 0.75}, {Addr: "h:2", Commands: 100, Share: 0.25}}
	o.Strategies[0].ProductID, o.Strategies[0].HotMaster = "d11-x-off-p01", "h:1"
	o.Strategies[0].Products = []tally.ProductFigures{{ID: "d11-x-off-p01"}}
	o.Strategies[1].Load, o.Strategies[1].HotMaster = []tally.MasterLoad{{Addr: "h:2", Commands: 9, Share: 1}}, "h:2"
	md.Reset()
	if err := writeMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Where the load landed", "- **off**: h:1 75% (300), h:2 25% (100); p01, the hottest product, on h:1", "- **redlock**: h:2 100% (9); the product on h:2"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	if d := NewDocument(o); len(d.Strategies[0].Load) != 2 || d.Strategies[1].HotMaster != "h:2" {
		t.Errorf("report.json load %+v, %+v", d.Strategies[0].Load, d.Strategies[1].Load)
	}
}

// fleetCatalogue is fleetOutcome sold as a catalogue of three products on
// a Redis Cluster: off oversold its hottest product, redis-decr told a
// buyer of its coldest "sold out" early, every other row is exact.
func fleetCatalogue() *scenario.Outcome {
	o := fleetOutcome()
	o.Settings.Products, o.Settings.Skew = 3, 1.1
	for _, m := range o.Strategies {
		m.ProductID += "-p01"
		m.HotMaster = "127.0.0.1:7301"
		m.Load = []tally.MasterLoad{{Addr: "127.0.0.1:7301", Commands: 800, Share: 0.8}, {Addr: "127.0.0.1:7302", Commands: 200, Share: 0.2}}
		base := strings.TrimSuffix(m.ProductID, "-p01")
		for i, share := range []int{60, 25, 15} {
			id := fmt.Sprintf("%s-p%02d", base, i+1)
			a := tally.Audit{InitialStock: 33, Orders: 33, Sold: 33, Consistent: true}
			p := tally.ProductFigures{ID: id, Buyers: 6 * share, Clicks: 12 * share, Audit: a}
			p.Tally.Created = 33
			switch {
			case m.Strategy == "off" && i == 0:
				p.Audit.Orders, p.Audit.Sold, p.Audit.Oversold = 36, 36, 3
			case m.Strategy == "redis-decr" && i == 2:
				p.EarlySoldOut = 2
			}
			m.Products = append(m.Products, p)
		}
	}
	return o
}

// A catalogue's page has what its report.md has: each row's products, a
// table per row under the count of exact ones (unfolded where one was
// not), the broken promises red with why, and where the load landed. A
// page of one product has neither section.
func TestCataloguePage(t *testing.T) {
	if page := render(t, fleetOutcome()); strings.Contains(page, "Each product") || strings.Contains(page, "load landed") {
		t.Errorf("one product's page has a catalogue's sections")
	}
	page := render(t, fleetCatalogue())
	for _, want := range []string{
		"<h2>Each product</h2>",
		"<details open><summary><b>off</b>: 2 of 3 products exact</summary>",
		"<details><summary><b>lua</b>: 3 of 3 products exact</summary>",
		"<details open><summary><b>redis-decr</b>: 2 of 3 products exact</summary>",
		`<td class="bad" title="sold 3 more units than the stock">3</td>`,
		`<td class="bad" title="2 buyers told sold out while a unit was left">2</td>`,
		`<td class="bad" title="2 buyers told sold out while a unit was left">no</td>`,
		"<h2>Where the load landed</h2>",
		"<li><b>lua</b>: 127.0.0.1:7301 80% (800), 127.0.0.1:7302 20% (200); p01, the hottest product, on 127.0.0.1:7301</li>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if n := strings.Count(page, "<details"); n != len(fleetCatalogue().Strategies) {
		t.Errorf("%d product tables, want one per row (%d)", n, len(fleetCatalogue().Strategies))
	}
}
