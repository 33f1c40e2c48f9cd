package scenario

import (
	"context"
	"fmt"
	"slices"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
)

// PartsRow is one row's answers from every part of a crowd (Part),
// gathered for Merge: Parts[i] is part i+1's.
type PartsRow struct {
	Strategy Strategy
	Parts    []PartRow
}

// PartRow is one part's answers to a row: the requests it sent, its raw
// results, and its attack's Span.
type PartRow struct {
	Sent    int
	Results vegeta.Results
	Span    Span
}

// Merge is the outcome of one crowd sent by several generators, each a
// Part of it under s (s.Part itself is ignored): each row's answers are
// the parts' put together, its latencies those of their samples
// together (never an average of the parts' percentiles), its send and
// answer times the longest part's (mergeTimes: the parts are taken to
// have started together, which the caller checks with Apart), and its
// audit is read from fl once, as Run reads it after one generator's
// attack. Each part's results keep their part in Vegeta's attack name
// ("lua part 2/3"): times of two parts, two machines' clocks, are never
// compared (tally.EarlySoldOut), and a queue's drain is timed from
// the audit's start, on this machine's clock.
// runID is the parts' shared --run-id, which named the products. The
// parts must all be done: a part still sending would be missing from
// the audit's answered orders, and a queued order still in flight from
// the drain.
//
// It returns the outcome so far with the first error: ErrInvalidSettings
// for a row that is not in s.Strategies, a shop's (ErrShop) or ctx's.
func Merge(ctx context.Context, s Settings, fl *fleet.Fleet, runID string, parts int, rows []PartsRow) (*Outcome, error) {
	s.Part = Part{}
	o := &Outcome{Settings: s, Env: CurrentEnv(), Targets: fl.Targets, Backend: fl.Backend, DoorSlots: fl.DoorSlots, Started: time.Now(), Parts: parts}
	defer func() { o.Wall = time.Since(o.Started) }()
	c := newCrowd(s)
	api := fleet.NewAPI(fl.Targets[0], fl.AdminToken)
	for _, row := range rows {
		if !slices.Contains(s.Strategies, row.Strategy) {
			return o, fmt.Errorf("%w: row %s is not among the strategies %v", ErrInvalidSettings, row.Strategy, s.Strategies)
		}
		a := &attack{settings: s, strategy: row.Strategy, crowd: c, fleet: fl, api: api, productID: productBase(runID, row.Strategy, 0), merged: true}
		a.products = s.productIDs(a.productID)
		a.productID = a.products[0]
		res := mergeRow(row)
		res.ProductID, res.Planned = a.productID, len(c.clicks)
		err := a.audit(ctx, res, nil, func() {})
		o.Strategies = append(o.Strategies, res)
		if err != nil {
			return o, fmt.Errorf("strategy %s: %w", row.Strategy, err)
		}
	}
	return o, nil
}

// mergeRow is row's parts put together: their answers counted, their
// samples' latencies, the longest part's times (mergeTimes).
func mergeRow(row PartsRow) *StrategyResult {
	res := &StrategyResult{Strategy: row.Strategy, CPU: -1}
	spans := make([]Span, len(row.Parts))
	for i, p := range row.Parts {
		res.Sent += p.Sent
		spans[i] = p.Span
		name := fmt.Sprintf("%s part %d/%d", row.Strategy, i+1, len(row.Parts))
		for _, r := range p.Results {
			r.Attack = name
			res.Results = append(res.Results, r)
		}
	}
	// Roughly in the order they were sent, as far as the clocks agree.
	slices.SortStableFunc(res.Results, func(x, y vegeta.Result) int { return x.Timestamp.Compare(y.Timestamp) })
	for i := range res.Results {
		res.Tally.Add(&res.Results[i])
		res.Metrics.Add(&res.Results[i])
	}
	res.Metrics.Close()
	exactLatencies(&res.Metrics, res.Results)
	mergeTimes(&res.Metrics, spans)
	return res
}
