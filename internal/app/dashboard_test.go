package app_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// metricName matches the metric names in a PromQL query: this project's,
// and the Go and process collectors'.
var metricName = regexp.MustCompile(`\b(?:flashsale|go|process)_[a-z0-9_]+\b`)

// checkDashboard checks that every query of compose's Grafana dashboard
// names at least one metric, and only metrics that m, a live scrape of a
// shop, has (a histogram's _bucket, _sum and _count are its family's).
func checkDashboard(t *testing.T, m families) {
	t.Helper()
	data, err := os.ReadFile("../../deploy/grafana/dashboards/flashsale.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("flashsale.json: %v", err)
	}
	queries := 0
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			queries++
			names := metricName.FindAllString(q.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: query %q names no metric of the shop", p.Title, q.Expr)
			}
			for _, n := range names {
				if !m.exports(n) {
					t.Errorf("panel %q: query %q: the shop exports no %s", p.Title, q.Expr, n)
				}
			}
		}
	}
	if queries == 0 {
		t.Error("flashsale.json: no queries")
	}
}

// exports reports whether the scrape has name, or name is a histogram's
// series of a family it has.
func (f families) exports(name string) bool {
	if _, ok := f[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if fam, ok := f[strings.TrimSuffix(name, suffix)]; ok && strings.HasSuffix(name, suffix) && fam.GetType().String() == "HISTOGRAM" {
			return true
		}
	}
	return false
}

// documented matches a row of docs/metrics.md's table of metrics.
var documented = regexp.MustCompile("(?m)^\\| `(flashsale_[a-z0-9_]+)` \\|")

// checkMetricsDoc checks that every metric docs/metrics.md documents is in
// m, a live scrape, and that every flashsale metric in m is documented.
func checkMetricsDoc(t *testing.T, m families) {
	t.Helper()
	data, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, row := range documented.FindAllStringSubmatch(string(data), -1) {
		seen[row[1]] = true
		if !m.exports(row[1]) {
			t.Errorf("docs/metrics.md documents %s, which the shop does not export", row[1])
		}
	}
	for name := range m {
		if strings.HasPrefix(name, "flashsale_") && !seen[name] {
			t.Errorf("the shop exports %s, which docs/metrics.md's table of metrics does not document", name)
		}
	}
}
