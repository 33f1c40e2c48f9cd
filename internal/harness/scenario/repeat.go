package scenario

import (
	"fmt"
	"slices"
)

// runSuffix tells the products of a row's --count runs apart: "" for the
// first, "-r2", "-r3"... for the others.
func runSuffix(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("-r%d", n+1)
}

// appendRow appends a row made of runs (one per --count) to rows: the run
// whose orders per second is the median stands for the row (its why-line is
// the row's), and carries every run in Runs. Nothing is appended for no
// runs.
func appendRow(rows []*StrategyResult, runs []*StrategyResult) []*StrategyResult {
	switch len(runs) {
	case 0:
		return rows
	case 1:
		return append(rows, runs[0])
	}
	byRate := slices.Clone(runs)
	slices.SortStableFunc(byRate, func(a, b *StrategyResult) int {
		switch x, y := a.OrdersPerSec(), b.OrdersPerSec(); {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	row := byRate[(len(byRate)-1)/2]
	row.Runs = runs
	return append(rows, row)
}

// allRuns is every run of every row: what Unsafe holds to account, since
// one run of several that oversold is an oversell.
func (o *Outcome) allRuns() []*StrategyResult {
	var out []*StrategyResult
	rows := o.Strategies
	for _, p := range o.Sweep {
		rows = append(rows, p.Strategies...)
	}
	for _, m := range rows {
		if len(m.Runs) > 0 {
			out = append(out, m.Runs...)
		} else {
			out = append(out, m)
		}
	}
	return out
}
