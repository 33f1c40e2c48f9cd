package app_test

import (
	"strings"
	"testing"
)

// checkStrategyLabel checks that no flashsale metric of m, a live scrape,
// calls the strategy anything but "strategy": a dashboard then groups
// every panel by one label.
func checkStrategyLabel(t *testing.T, m families) {
	t.Helper()
	for name, fam := range m {
		if !strings.HasPrefix(name, "flashsale_") {
			continue
		}
		for _, metric := range fam.GetMetric() {
			for _, l := range metric.GetLabel() {
				if n := l.GetName(); n == "mode" || n == "lock_mode" {
					t.Errorf("%s labels the strategy %q, want \"strategy\"", name, n)
				}
			}
		}
	}
}
