package strategy_test

import (
	"math"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Every strategy has a Hold: a new one gets its row in holds.go, counted
// in its flow and checked by order's TestHoldsAreTheRoundTripsCounted.
func TestEveryStrategyHasAHold(t *testing.T) {
	for _, n := range strategy.All() {
		if _, ok := n.Holds(); !ok {
			t.Errorf("%s has no Hold in holds.go", n)
		}
	}
}

func TestCeiling(t *testing.T) {
	rtt, err := netsim.ParseRTT("db=2ms,redis=1ms")
	if err != nil {
		t.Fatal(err)
	}
	const work = 2 * time.Millisecond
	for _, tc := range []struct {
		name       string
		n          strategy.Name
		sqlite     bool
		per, rows  int
		want       float64
		wantNoCeil bool
	}{
		{"lua: 1 redis + 6 db trips + work", strategy.Lua, false, 1, 1, 1 / 0.015, false},
		{"sql-atomic on a row lock: 1 db trip", strategy.SQLAtomic, false, 1, 1, 500, false},
		{"sql-atomic on SQLite: 3 db trips", strategy.SQLAtomic, true, 1, 1, 1 / 0.006, false},
		{"sql-atomic in 4 buckets", strategy.SQLAtomic, false, 1, 4, 2000, false},
		{"buckets share SQLite's lock", strategy.SQLAtomic, true, 1, 4, 1 / 0.006, false},
		{"fenced in batches of 64", strategy.Fenced, false, 64, 1, 64 / 0.017, false},
		{"redis-decr holds nothing", strategy.RedisDecr, false, 1, 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := tc.n.Holds()
			got, ok := h.Ceiling(rtt, work, tc.sqlite, tc.per, tc.rows)
			if ok == tc.wantNoCeil || math.Abs(got-tc.want) > 1e-6*tc.want {
				t.Errorf("Ceiling: got %v, %v; want %v, %v", got, ok, tc.want, !tc.wantNoCeil)
			}
		})
	}
	h, _ := strategy.Lua.Holds()
	if _, ok := h.Ceiling(netsim.RTT{}, work, false, 1, 1); ok {
		t.Errorf("Ceiling at rtt 0: got one, want none (no network)")
	}
}
