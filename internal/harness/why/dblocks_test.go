package why

import (
	"testing"

	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The database locks' clauses state what was measured: sql-for-update the
// audit's figures and the commits it held back under the row lock,
// sql-version the tries that lost and the tries per order.
func TestDatabaseLockFigures(t *testing.T) {
	held := sale(strategy.SQLForUpdate, 100, 0, 100)
	held.Events = tally.Events{LateCommits: 10}
	lost := sale(strategy.SQLVersion, 100, 0, 100)
	lost.Audit.Orders = 100
	lost.Events = tally.Events{VersionMoved: 150}
	none := sale(strategy.SQLVersion, 0, 0, 0)
	for _, tc := range []struct {
		name string
		row  Row
		want map[string]float64
		not  []string
	}{
		{"for update, late commits", held,
			map[string]float64{"late_commits": 10, "sold": 100, "overwritten": 0, "oversold": 0, "duplicate_orders": 0}, []string{"tries_per_order"}},
		{"version, lost tries", lost,
			map[string]float64{"tries_per_order": 2.5, "sold": 100, "oversold": 0}, nil},
		{"version, nothing sold", none, map[string]float64{"sold": 0}, []string{"tries_per_order"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := facts(tc.row)
			for k, v := range tc.want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s = %v (stated %v), want %v", k, g, ok, v)
				}
			}
			for _, k := range tc.not {
				if _, ok := got[k]; ok {
					t.Errorf("%s stated, want it left out", k)
				}
			}
		})
	}
}
