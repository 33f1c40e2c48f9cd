package scenario

import (
	"context"
	"fmt"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
)

// What a --sweep sells unless told otherwise: an open crowd (a fresh buyer
// per click) for SweepDuration at each rate, a stock no rate can sell out
// (2,000 req/s for 3 s is 6,000 clicks), and no stalls, so that each point
// measures what the strategy serves at that rate, not a sold-out shop
// answering 409s at memory speed, nor the 300 ms stalls the lesson rows
// inject.
const (
	SweepDuration = 3 * time.Second
	SweepStock    = 1_000_000
)

// ForSweep returns s with a sweep's settings (see SweepDuration), keeping
// every setting for which given reports true.
func (s Settings) ForSweep(given func(flag string) bool) Settings {
	set := func(flag string, f func()) {
		if !given(flag) {
			f()
		}
	}
	set("users", func() { s.Users = 0 })
	set("duration", func() { s.Duration = SweepDuration })
	set("stock", func() { s.Stock = SweepStock })
	set("stall-rate", func() { s.StallRate = 0 })
	return s
}

// SweepPoint is every row at one offered rate.
type SweepPoint struct {
	Rate       vegeta.Rate
	Strategies []*StrategyResult
}

// Sweep runs every row of s at each rate, in order (Run for each, with
// s.Rate replaced), and returns one outcome whose Sweep holds the points
// and whose Strategies are empty. It stops at the first error, returning the
// points so far.
func Sweep(ctx context.Context, s Settings, fl *fleet.Fleet, opts Options, rates []vegeta.Rate) (*Outcome, error) {
	o := &Outcome{Settings: s, Env: CurrentEnv(), Targets: fl.Targets, Backend: fl.Backend, DoorSlots: fl.DoorSlots, Started: time.Now()}
	defer func() { o.Wall = time.Since(o.Started) }()
	base := opts.RunID
	if base == "" {
		base = o.Started.Format("20060102-150405.000")
	}
	for i, r := range rates {
		at := s
		at.Rate, at.RatePer = r.Freq, r.Per
		opts.RunID = fmt.Sprintf("%s-s%d", base, i+1)
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "offered %s req/s (%.0f/s):\n", FormatRate(r), at.PerSecond())
		}
		out, err := Run(ctx, at, fl, opts)
		if out != nil {
			o.Sweep = append(o.Sweep, SweepPoint{Rate: r, Strategies: out.Strategies})
		}
		if err != nil {
			return o, fmt.Errorf("sweep at %s: %w", FormatRate(r), err)
		}
	}
	return o, nil
}
