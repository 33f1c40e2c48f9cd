package why

import (
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/ledger"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestWhyDatabaseLocks: the database locks' clauses say what was measured:
// sql-for-update its late commits waited for under the row lock,
// sql-version its lost tries and the tries per order.
func TestWhyDatabaseLocks(t *testing.T) {
	s := Settings{Work: 2 * time.Millisecond, LockTTL: 100 * time.Millisecond, LateCommit: 300 * time.Millisecond}
	exact := ledger.Audit{InitialStock: 100, Sold: 100, Orders: 100, Consistent: true}
	for _, tc := range []struct {
		name string
		row  Row
		want []string
	}{
		{"for update, late commits", Row{Strategy: strategy.SQLForUpdate, Settings: s, Audit: exact,
			Events: ledger.Events{LateCommits: 10}},
			[]string{"FOR UPDATE", "10 commits were held back 300ms with the row still locked", "sold 100 of 100", "oversold 0"}},
		{"version, lost tries", Row{Strategy: strategy.SQLVersion, Settings: s, Audit: exact,
			Events: ledger.Events{VersionMoved: 150}, Tally: ledger.Tally{Errors: map[string]int{"503 version_conflict": 7}}},
			[]string{"150 tries found it moved", "2ms of work", "2.5 tries per order", "sold 100 of 100", "503 version_conflict×7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := Line(tc.row)
			for _, w := range tc.want {
				if !strings.Contains(why, w) {
					t.Errorf("why = %q, want it to say %q", why, w)
				}
			}
		})
	}
}
