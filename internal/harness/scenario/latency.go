package scenario

import (
	"math"
	"slices"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// exactLatencies replaces Vegeta's latency percentiles, which its
// t-digest estimates, with those of the samples rs themselves (nearest
// rank: the smallest latency at or above a fraction q of them), so that
// the p99 of several parts merged is the p99 of their samples together,
// whatever order they were added in.
func exactLatencies(m *vegeta.Metrics, rs vegeta.Results) {
	if len(rs) == 0 {
		return
	}
	ls := make([]time.Duration, len(rs))
	for i := range rs {
		ls[i] = rs[i].Latency
	}
	slices.Sort(ls)
	l := &m.Latencies
	l.P50, l.P90, l.P95, l.P99 = Quantile(ls, 0.50), Quantile(ls, 0.90), Quantile(ls, 0.95), Quantile(ls, 0.99)
}

// Quantile is the nearest-rank q-quantile of sorted latencies: the
// ceil(q·n)-th smallest. It returns 0 for none.
func Quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}
