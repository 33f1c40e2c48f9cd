package scenario

import (
	"strconv"
	"strings"
)

// bucketsSuffix marks a strategy whose product's stock is split over K
// buckets ("sql-atomic+k4", "redis-decr+k3": stock.Product.Buckets), so
// that one sweep can run one strategy at several K side by side.
const bucketsSuffix = "+k"

// Buckets returns the K of a "+kK" strategy, or 0 for a strategy without one (its
// product then gets Settings.Buckets, the --buckets flag, if its strategy
// splits).
func (m Strategy) Buckets() int {
	_, k, ok := strings.Cut(string(m), bucketsSuffix)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(k)
	if err != nil {
		return 0
	}
	return n
}
