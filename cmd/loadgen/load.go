package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// errThreshold is returned by attack when a --threshold failed: exit 99.
var errThreshold = errors.New("a --threshold failed")

// runOrSweep runs the scenario once, or, with --sweep, at each rate.
func runOrSweep(ctx context.Context, cfg config, fleet *fleet.Fleet, opts scenario.Options) (*scenario.Outcome, error) {
	if len(cfg.sweep) > 0 {
		return scenario.Sweep(ctx, cfg.settings, fleet, opts, cfg.sweep)
	}
	return scenario.Run(ctx, cfg.settings, fleet, opts)
}

// runTitle is the run's first line: the crowd, the pace, the fleet.
func runTitle(cfg config, shops int, backend string) string {
	s := cfg.settings
	crowd := fmt.Sprintf("%d buyers clicking 1..%d times (%d requests)", s.Users, s.Clicks, s.PlannedRequests())
	if s.Open() {
		crowd = fmt.Sprintf("a fresh buyer per click for %v", s.Duration)
	}
	pace := fmt.Sprintf("at %s req/s", scenario.FormatRate(s.VegetaRate()))
	if s.RatePer > 0 && s.RatePer != time.Second {
		pace = fmt.Sprintf("at %s (%.0f req/s)", scenario.FormatRate(s.VegetaRate()), s.PerSecond())
	}
	if len(cfg.sweep) > 0 {
		rates := make([]string, len(cfg.sweep))
		for i, r := range cfg.sweep {
			rates[i] = scenario.FormatRate(r)
		}
		pace = "at each of " + strings.Join(rates, ", ") + " req/s"
	}
	line := fmt.Sprintf("双11: %s for %d units, %s, on %d shops (%s)", crowd, s.Stock, pace, shops, backend)
	if !s.RTT.IsZero() {
		line += ", rtt " + s.RTT.String()
	}
	if n := s.Runs(); n > 1 {
		line += fmt.Sprintf(", each row %d times", n)
	}
	return line
}

// thresholdTexts are the thresholds as given, for report.json.
func thresholdTexts(ts []report.Threshold) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}

// printThresholds says whether every threshold held, and which row failed
// which; first, those a part left to loadgen merge (unchecked).
func printThresholds(w io.Writer, ts, unchecked []report.Threshold, failed []report.Failure) {
	if len(unchecked) > 0 {
		fmt.Fprintf(w, "Thresholds on the audit (%s): not checked by a part; loadgen merge checks them\n", strings.Join(thresholdTexts(unchecked), ", "))
		skip := thresholdTexts(unchecked)
		ts = slices.DeleteFunc(slices.Clone(ts), func(t report.Threshold) bool { return slices.Contains(skip, t.String()) })
	}
	if len(ts) == 0 {
		return
	}
	if len(failed) == 0 {
		fmt.Fprintf(w, "Thresholds: all %d held on every row (%s)\n", len(ts), strings.Join(thresholdTexts(ts), ", "))
		return
	}
	fmt.Fprintf(w, "THRESHOLDS FAILED (exit %d):\n", exitThreshold)
	for _, f := range failed {
		fmt.Fprintf(w, "  %s\n", f)
	}
}
