package report

import (
	"bytes"
	"encoding/json"
	"html/template"
	"slices"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// lifeFigures are the second table's figures of fleetPay, by row.
var lifeFigures = [][]string{
	{"sql-for-update", "98", "0", "30", "31", "27", "2", "98", "1"},
	{"sql-atomic", "100", "0", "31", "31", "31", "0", "100", "0"},
}

// A sale with payments' page shows the second table with the terminal's
// figures, a unit returned twice and the undersold units red; a run
// without a pay window has no such table.
func TestPageShowsTheOrdersLives(t *testing.T) {
	o := fleetPay()
	l := newHTMLLife(o)
	if l == nil {
		t.Fatal("no life table on a sale with payments")
	}
	var got [][]string
	var red []string
	for r, row := range l.Rows {
		var texts []string
		for i, c := range row {
			texts = append(texts, c.Text)
			if c.Wrong != "" {
				red = append(red, row[0].Text+"/"+LifeColumns[i])
			}
		}
		if !slices.Equal(texts, lifeFigures[r]) {
			t.Errorf("row %d: got %v, want %v", r, texts, lifeFigures[r])
		}
		got = append(got, texts)
	}
	if len(got) != len(lifeFigures) {
		t.Errorf("rows: got %d, want %d", len(got), len(lifeFigures))
	}
	if want := []string{"sql-for-update/returned", "sql-for-update/undersold"}; !slices.Equal(red, want) {
		t.Errorf("red cells: got %v, want %v", red, want)
	}
	page := render(t, o)
	if !strings.Contains(page, template.HTMLEscapeString(lifeIntro)) || !strings.Contains(page, "<th>pay_<wbr>late</th>") {
		t.Errorf("page: want the life table under its line")
	}
	if got, want := strings.Count(page, `class="bad"`), 2; got != want {
		t.Errorf("page: got %d cells of class bad, want %d (the naive row's returned and undersold)", got, want)
	}
	for name, o := range pages() {
		if name == "pay" {
			continue
		}
		if page := render(t, o); strings.Contains(page, template.HTMLEscapeString(lifeIntro)) || strings.Contains(page, "pay_<wbr>late") {
			t.Errorf("%s: a run without a pay window shows a life table", name)
		}
	}
}

// report.json carries the second table as the terminal shows it, beside
// the figures behind it; without a pay window it has neither key.
func TestJSONHasTheOrdersLives(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    *scenario.Outcome
		want [][]string
	}{
		{"pay", fleetPay(), lifeFigures},
		{"default", fleetOutcome(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeJSON(&b, tc.o); err != nil {
				t.Fatal(err)
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			_, hasCols := raw["life_columns"]
			_, hasTable := raw["life_table"]
			if tc.want == nil {
				if hasCols || hasTable {
					t.Errorf("a run without a pay window: life_columns %v, life_table %v, want neither", hasCols, hasTable)
				}
				return
			}
			var doc Document
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(doc.LifeColumns, LifeColumns) {
				t.Errorf("life_columns: got %v, want %v", doc.LifeColumns, LifeColumns)
			}
			if !slices.EqualFunc(doc.LifeTable, tc.want, slices.Equal) {
				t.Errorf("life_table: got %v, want %v", doc.LifeTable, tc.want)
			}
			m := doc.Strategies[0]
			if l := m.Audit.Life; l == nil || l.Paid != 98 || l.Undersold != 2 || m.Events.Returned != 31 || m.Payments == nil || m.Payments.Expired != 1 {
				t.Errorf("sql-for-update's figures: life %+v, returned %d, payments %+v", l, m.Events.Returned, m.Payments)
			}
		})
	}
}

// The settings line repeats a sale with payments' flags, the naive expiry
// and a shop's clock ahead too; a run without a pay window has none of them.
func TestSettingsRepeatThePayFlags(t *testing.T) {
	o := fleetPay()
	o.Settings.LatePay, o.Flags = true, map[string]string{"naive-expiry": "true", "clock-ahead": "500ms"}
	if got, want := settingsLine(o), " --pay-within 1s --pay 0.7 --late-pay --naive-expiry --clock-ahead 500ms"; !strings.HasSuffix(got, want) {
		t.Errorf("settings line %q, want it to end %q", got, want)
	}
	if got := settingsLine(fleetOutcome()); strings.Contains(got, "--pay") || strings.Contains(got, "--naive-expiry") {
		t.Errorf("settings line without a pay window: %q, want no pay flags", got)
	}
}
