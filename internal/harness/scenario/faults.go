package scenario

import (
	"context"
	"slices"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// An attack arms the run's faults that strike its row (fault.Fault) in
// order before its first click and, once its last answer is in and
// fault.Attack.Stopped has closed, stops them in the reverse order. An
// optional interface lets a fault do one more step:

// settler is an armed fault with a last step after the audit, which it
// may reread into au (a crash waits for redis-decr's drift); lost is how
// many answered orders were not written.
type settler interface {
	Settle(ctx context.Context, au *tally.Audit, lost int) error
}

// rows are the strategies of s's rows, in order, each once.
func (s Settings) rows() []strategy.Name {
	var out []strategy.Name
	for _, m := range s.Strategies {
		if !slices.Contains(out, m.Name()) {
			out = append(out, m.Name())
		}
	}
	return out
}

// bucketed returns the strategies of s's rows whose strategy splits the
// stock in buckets ("+kK").
func (s Settings) bucketed() []strategy.Name {
	var out []strategy.Name
	for _, m := range s.Strategies {
		if m.Buckets() > 0 && !slices.Contains(out, m.Name()) {
			out = append(out, m.Name())
		}
	}
	return out
}

// ready asks each of s's faults that strikes a row of the run whether fl
// lets it, and returns how each will strike, for the report.
func (s Settings) ready(fl *fleet.Fleet) ([]string, error) {
	var how []string
	for _, f := range s.Faults {
		if !slices.ContainsFunc(s.rows(), f.Strikes) {
			continue
		}
		h, err := f.Ready(fl)
		if err != nil {
			return nil, err
		}
		if h != "" {
			how = append(how, fault.Name(f)+": "+h)
		}
	}
	return how, nil
}

// arm arms the faults of s that strike a's row, in order. On error the
// faults armed so far are returned with it, for the caller to stop.
func (s Settings) arm(ctx context.Context, a *fault.Attack) ([]fault.Armed, error) {
	var armed []fault.Armed
	for _, f := range s.Faults {
		if !f.Strikes(a.Strategy) {
			continue
		}
		x, err := f.Arm(ctx, a)
		if err != nil {
			return armed, err
		}
		armed = append(armed, x)
	}
	return armed, nil
}

// stopFaults stops armed in the reverse of the order they were armed,
// records what each measured in res, in the order they were armed, and
// returns the first error.
func stopFaults(ctx context.Context, armed []fault.Armed, res *StrategyResult) error {
	var first error
	recs := make(fault.Records, len(armed))
	for i := len(armed) - 1; i >= 0; i-- {
		rec, err := armed[i].Stop(ctx, res.Results)
		if err != nil && first == nil {
			first = err
		}
		recs[i] = rec
	}
	for _, r := range recs {
		if r != nil {
			res.Records = append(res.Records, r)
		}
	}
	return first
}
