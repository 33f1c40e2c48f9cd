package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/ledger"
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
	for _, m := range o.Modes {
		m.Products = []ledger.ProductFigures{
			{ID: m.ProductID + "-p01", Buyers: 3, Clicks: 4, Audit: ledger.Audit{InitialStock: 1, Orders: 2, Sold: 2, Oversold: 1, Consistent: true}},
			{ID: m.ProductID + "-p02", Buyers: 1, Clicks: 1, Audit: ledger.Audit{InitialStock: 1, Orders: 1, Sold: 1, Consistent: true}},
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
		"| p01 | 3 | 4 | 1 | 0 | 0 | 2 | 1 | 0 | yes | - | 0 | no |", "--products 2 --skew 1.1"} {
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
	if len(doc.Modes[0].Products) != 2 || doc.Modes[0].Products[0].Audit.Oversold != 1 || doc.Settings.Products != 2 {
		t.Errorf("report.json products %+v, settings %+v", doc.Modes[0].Products, doc.Settings)
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
	o.Modes[0].Load = []ledger.MasterLoad{{Addr: "h:1", Commands: 300, Share: 0.75}, {Addr: "h:2", Commands: 100, Share: 0.25}}
	o.Modes[0].ProductID, o.Modes[0].HotMaster = "d11-x-off-p01", "h:1"
	o.Modes[0].Products = []ledger.ProductFigures{{ID: "d11-x-off-p01"}}
	o.Modes[1].Load, o.Modes[1].HotMaster = []ledger.MasterLoad{{Addr: "h:2", Commands: 9, Share: 1}}, "h:2"
	md.Reset()
	if err := writeMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Where the load landed", "- **off**: h:1 75% (300), h:2 25% (100); p01, the hottest product, on h:1", "- **redlock**: h:2 100% (9); the product on h:2"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	if d := NewDocument(o); len(d.Modes[0].Load) != 2 || d.Modes[1].HotMaster != "h:2" {
		t.Errorf("report.json load %+v, %+v", d.Modes[0].Load, d.Modes[1].Load)
	}
}
