package report

import (
	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// LoadSettingsDoc are the load tester's settings in report.json.
type LoadSettingsDoc struct {
	// Rate is --rate as given ("250", "50/100ms"); RatePerSecond (above)
	// its requests per period, RatePeriodMs the period.
	Rate           string  `json:"rate"`
	RatePeriodMs   float64 `json:"rate_period_ms"`
	OfferedPerSec  float64 `json:"offered_per_second"`
	OpenModel      bool    `json:"open_model"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
	Workers        uint64  `json:"workers"`
	MaxWorkers     uint64  `json:"max_workers"`
	Count          int     `json:"count"`
	Batch          int     `json:"batch"`
	// Part is the generator's part of the crowd, "2/3" (--part);
	// absent for the whole crowd.
	Part string `json:"part,omitempty"`
}

func newLoadSettingsDoc(s scenario.Settings) LoadSettingsDoc {
	r := s.VegetaRate()
	timeout, workers, maxWorkers := s.Timeout, s.Workers, s.MaxWorkers
	if timeout == 0 {
		timeout = scenario.DefaultTimeout
	}
	if maxWorkers == 0 {
		maxWorkers = scenario.DefaultMaxWorkers
	}
	if workers == 0 {
		workers = min(scenario.DefaultWorkers, maxWorkers)
	}
	return LoadSettingsDoc{
		Rate: scenario.FormatRate(r), RatePeriodMs: ms(r.Per), OfferedPerSec: s.PerSecond(), OpenModel: s.Open(),
		TimeoutSeconds: timeout.Seconds(), Workers: workers, MaxWorkers: maxWorkers, Count: s.Runs(), Batch: s.Batch,
		Part: s.Part.String(),
	}
}

// ThresholdsDoc is what --threshold found: every expression, and those a
// row failed.
type ThresholdsDoc struct {
	Given  []string  `json:"given"`
	Failed []Failure `json:"failed"`
}

func newThresholdsDoc(o *scenario.Outcome) *ThresholdsDoc {
	if len(o.Thresholds) == 0 {
		return nil
	}
	ts, err := ParseThresholds(o.Thresholds)
	d := &ThresholdsDoc{Given: o.Thresholds, Failed: []Failure{}}
	if err != nil {
		return d
	}
	if f := Check(o, ts); len(f) > 0 {
		d.Failed = f
	}
	return d
}

// ParseThresholds parses every expression, returning the first error.
func ParseThresholds(exprs []string) ([]Threshold, error) {
	var out []Threshold
	for _, e := range exprs {
		t, err := ParseThreshold(e)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
