package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flashsale/flashsale/internal/strategy"
)

// Strategy is one row of the table, as --strategies and the first column
// name it: a strategy.Name alone ("fenced"), batched ("fenced+batch": its
// product is created with batch_max, so that a holder of the product lock
// serves every buyer its shop has queued in one transaction), or with its
// stock in buckets ("sql-atomic+k4"). Name is the strategy.Name the shop
// is given; the suffixes are the product's settings, which is why this is
// not a strategy.Name. Only the strategies that batch
// (strategy.Name.Batches) have a batched row.
type Strategy string

// batchSuffix marks a batched strategy.
const batchSuffix = "+batch"

// Name returns m's strategy.Name, without "+batch" or "+kK".
func (m Strategy) Name() strategy.Name {
	s, _, _ := strings.Cut(string(m), bucketsSuffix)
	return strategy.Name(strings.TrimSuffix(s, batchSuffix))
}

// Batched reports whether m batches.
func (m Strategy) Batched() bool { return strings.HasSuffix(string(m), batchSuffix) }

// Safe reports whether m claims to sell exactly the stock (strategy.Name.Safe).
func (m Strategy) Safe() bool { return m.Name().Safe() }

// SurvivesLateCommit reports whether m stays exact under a late commit
// (strategy.Name.SurvivesLateCommit): batching shares a lease, and does not
// change what the lease is worth.
func (m Strategy) SurvivesLateCommit() bool { return m.Name().SurvivesLateCommit() }

// Batch returns the batched row of strategy n.
func Batch(n strategy.Name) Strategy { return Strategy(string(n) + batchSuffix) }

// ParseStrategy returns the row named s: a strategy's name, or the name of
// one that batches followed by "+batch", or sql-atomic or redis-decr followed
// by "+kK" (its stock in K buckets, 2..256).
func ParseStrategy(s string) (Strategy, error) {
	m := Strategy(s)
	n, err := strategy.Parse(string(m.Name()))
	switch {
	case err != nil:
		return "", fmt.Errorf("unknown strategy %q (want %s)", s, StrategyList())
	case m.Batched() && !n.Batches():
		return "", fmt.Errorf("%q: %s does not batch (only %s)", s, n, batchList())
	}
	if _, k, ok := strings.Cut(s, bucketsSuffix); ok {
		if m.Buckets() < 2 || m.Buckets() > 256 || strconv.Itoa(m.Buckets()) != k {
			return "", fmt.Errorf("%q: want %s%sK, K buckets in 2..256", s, n, bucketsSuffix)
		}
		if (n != strategy.SQLAtomic && n != strategy.RedisDecr) || m.Batched() {
			return "", fmt.Errorf("%q: only %s and %s split their stock in buckets", s, strategy.SQLAtomic, strategy.RedisDecr)
		}
	}
	return m, nil
}

// Strategies returns the default rows: every strategy, in the order the load
// generator runs them, then fenced batched. No ZooKeeper server runs
// inside a Go process: the load generator starts an ensemble for the
// zookeeper row, or shows the row as skipped (Skipped) where it cannot.
func Strategies() []Strategy {
	var ms []Strategy
	for _, n := range strategy.All() {
		ms = append(ms, Strategy(n))
	}
	return append(ms, Batch(strategy.Fenced))
}

// StrategyList returns the strategy names for messages and --help.
func StrategyList() string {
	return strategy.List() + `, or one of ` + batchList() + ` followed by "+batch"`
}

// batchList names the strategies that batch.
func batchList() string {
	var names []string
	for _, n := range strategy.All() {
		if n.Batches() {
			names = append(names, string(n))
		}
	}
	return strings.Join(names, ", ")
}
