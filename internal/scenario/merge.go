package scenario

import (
	"context"
	"fmt"
	"slices"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/fleet"
)

// PartsRow is one row's answers from every part of a crowd (Part),
// gathered for Merge.
type PartsRow struct {
	Mode Mode
	// Sent is the requests the parts sent, summed.
	Sent int
	// Results are every part's raw results, in any order.
	Results vegeta.Results
}

// Merge is the outcome of one crowd sent by several generators, each a
// Part of it under s (s.Part itself is ignored): each row's answers are
// the parts' put together, its latencies those of their samples
// together (never an average of the parts' percentiles), and its audit
// is read from fl once, as Run reads it after one generator's attack.
// runID is the parts' shared --run-id, which named the products. The
// parts must all be done: a part still sending would be missing from
// the audit's answered orders, and a queued order still in flight from
// the drain.
//
// It returns the outcome so far with the first error: ErrInvalidSettings
// for a row that is not in s.Modes, a shop's (ErrShop) or ctx's.
func Merge(ctx context.Context, s Settings, fl *fleet.Fleet, runID string, parts int, rows []PartsRow) (*Outcome, error) {
	s.Part = Part{}
	o := &Outcome{Settings: s, Env: CurrentEnv(), Targets: fl.Targets, Backend: fl.Backend, Started: time.Now(), Parts: parts}
	defer func() { o.Wall = time.Since(o.Started) }()
	c := newCrowd(s)
	api := fleet.NewAPI(fl.Targets[0], fl.AdminToken)
	for _, row := range rows {
		if !slices.Contains(s.Modes, row.Mode) {
			return o, fmt.Errorf("%w: row %s is not among the modes %v", ErrInvalidSettings, row.Mode, s.Modes)
		}
		a := &attack{settings: s, mode: row.Mode, crowd: c, fleet: fl, api: api, productID: productBase(runID, row.Mode, 0)}
		a.products = s.productIDs(a.productID)
		a.productID = a.products[0]
		res := &ModeResult{Mode: row.Mode, ProductID: a.productID, Planned: len(c.clicks), Sent: row.Sent, CPU: -1}
		res.Results = slices.Clone(row.Results)
		// In the order they were sent, as one generator's would be.
		slices.SortStableFunc(res.Results, func(x, y vegeta.Result) int { return x.Timestamp.Compare(y.Timestamp) })
		for i := range res.Results {
			res.Tally.Add(&res.Results[i])
			res.Metrics.Add(&res.Results[i])
		}
		res.Metrics.Close()
		exactLatencies(&res.Metrics, res.Results)
		err := a.audit(ctx, res, nil, func() {})
		o.Modes = append(o.Modes, res)
		if err != nil {
			return o, fmt.Errorf("mode %s: %w", row.Mode, err)
		}
	}
	return o, nil
}
