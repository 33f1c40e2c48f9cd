package locktable_test

import (
	"slices"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/locktable"
)

// TestClaims: every service has a name and a claimed latency, the claimed
// order lists each service once, fastest claim first, and the ratios are
// those of the claimed rates (the row lock, with no figure, has none).
func TestClaims(t *testing.T) {
	order := locktable.ClaimedOrder()
	if got, want := slices.Sorted(slices.Values(order)), locktable.Kinds(); !slices.Equal(got, want) {
		t.Errorf("ClaimedOrder() = %v, want every kind once (%v)", order, want)
	}
	prev := 0
	for i, k := range order {
		c := locktable.Claimed(k)
		if k.String() == "unknown" || c.Latency == "" {
			t.Errorf("%d: name %q, claimed latency %q; want both", k, k.String(), c.Latency)
		}
		if c.TPS == 0 {
			if i != len(order)-1 {
				t.Errorf("%s has no figure but is not last in the claimed order", k)
			}
			continue
		}
		if i > 0 && c.TPS >= prev {
			t.Errorf("%s claims %d TPS, not below the one before it (%d)", k, c.TPS, prev)
		}
		prev = c.TPS
	}
	for k, want := range map[locktable.Kind]float64{
		locktable.SingleRedis: 1, locktable.Redlock: 10, locktable.Etcd: 20, locktable.ZooKeeper: 100, locktable.RowLock: 0,
	} {
		if got := locktable.ClaimedRatio(k); got != want {
			t.Errorf("ClaimedRatio(%s) = %v, want %v", k, got, want)
		}
	}
}
