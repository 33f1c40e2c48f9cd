package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// A Threshold is a pass criterion for every row, in k6's spirit:
// "p99<200ms", "oversold==0", "errors<1%". Parse one with ParseThreshold.
type Threshold struct {
	Figure Figure
	Op     string  // <, <=, >, >=, ==, !=
	Value  float64 // in the figure's unit (milliseconds for latencies), or a percentage
	// Percent: Value is a share of the row's requests.
	Percent bool
	text    string
}

// String is the threshold as it was written.
func (t Threshold) String() string { return t.text }

// ops are the comparisons, longest first so that "<=" is not read as "<".
var ops = []string{"<=", ">=", "==", "!=", "<", ">"}

// ThresholdMetrics names the figures a threshold can test.
func ThresholdMetrics() []string {
	names := make([]string, len(Figures))
	for i, f := range Figures {
		names[i] = f.Name
	}
	return names
}

// ParseThreshold reads "FIGURE OP VALUE": a figure of Figures, one of
// < <= > >= == !=, and a number, a duration for a latency (200ms, 1.5s;
// a bare number is milliseconds), or a percentage for a count of answers
// (errors<1%).
func ParseThreshold(expr string) (Threshold, error) {
	s := strings.ReplaceAll(expr, " ", "")
	for _, op := range ops {
		name, val, found := strings.Cut(s, op)
		if !found {
			continue
		}
		f, ok := FigureNamed(name)
		if !ok {
			return Threshold{}, fmt.Errorf("%q: unknown figure %q, want one of %s", expr, name, strings.Join(ThresholdMetrics(), ", "))
		}
		t := Threshold{Figure: f, Op: op, text: s}
		var err error
		switch {
		case strings.HasSuffix(val, "%"):
			if !f.OfRequests {
				return t, fmt.Errorf("%q: %s is not a count of answers; a percentage is for %s", expr, name, strings.Join(shareFigures(), ", "))
			}
			t.Percent = true
			t.Value, err = strconv.ParseFloat(strings.TrimSuffix(val, "%"), 64)
		case f.Unit == "ms" && strings.IndexFunc(val, isLetter) >= 0:
			var d time.Duration
			d, err = time.ParseDuration(val)
			t.Value = ms(d)
		default:
			t.Value, err = strconv.ParseFloat(val, 64)
		}
		if err != nil || val == "" {
			return t, fmt.Errorf("%q: %q is not a value for %s (want a number%s)", expr, val, name, unitHint(f))
		}
		return t, nil
	}
	return Threshold{}, fmt.Errorf("%q: want FIGURE OP VALUE, e.g. p99<200ms, oversold==0, errors<1%%", expr)
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r == 'µ' }

func unitHint(f Figure) string {
	switch {
	case f.Unit == "ms":
		return " or a duration such as 200ms"
	case f.OfRequests:
		return " or a percentage of the requests such as 1%"
	}
	return ""
}

func shareFigures() []string {
	var out []string
	for _, f := range Figures {
		if f.OfRequests {
			out = append(out, f.Name)
		}
	}
	return out
}

// value is t's figure in m, as a percentage of m's requests if t asks.
func (t Threshold) value(m *scenario.StrategyResult) float64 {
	v := t.Figure.Of(m)
	if t.Percent {
		if m.Tally.Requests == 0 {
			return 0
		}
		return 100 * v / float64(m.Tally.Requests)
	}
	return v
}

// holds reports whether v passes t.
func (t Threshold) holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Value
	case "<=":
		return v <= t.Value
	case ">":
		return v > t.Value
	case ">=":
		return v >= t.Value
	case "==":
		return v == t.Value
	}
	return v != t.Value
}

// A Failure is a threshold a row did not meet.
type Failure struct {
	// Strategy is the row: its strategy, and in a sweep the offered rate ("lua at
	// 500/s", "lua at 50/100ms").
	Strategy  string `json:"strategy"`
	Threshold string `json:"threshold"`
	// Got is the row's figure, or, with --count, the first failing run's;
	// Run is that run's number from 1 (0 for a row run once).
	Got  string `json:"got"`
	Run  int    `json:"run,omitempty"`
	Runs int    `json:"runs"`
}

// String says which row failed what, with what: "lua: p99<200ms failed:
// p99 was 412ms (run 2 of 3)".
func (f Failure) String() string {
	s := fmt.Sprintf("%s: %s failed: it was %s", f.Strategy, f.Threshold, f.Got)
	if f.Runs > 1 {
		s += fmt.Sprintf(" (run %d of %d)", f.Run, f.Runs)
	}
	return s
}

// Check evaluates every threshold on every row of o; with --count, on
// every run of the row, so that a row passes only if each run does. It
// returns the failures, one per row and threshold, in row order. A part
// of a crowd skips those on the audit (Unchecked).
func Check(o *scenario.Outcome, ts []Threshold) []Failure {
	var out []Failure
	for _, row := range labelledRows(o) {
		m := row.m
		runs := m.Runs
		if len(runs) == 0 {
			runs = []*scenario.StrategyResult{m}
		}
		for _, t := range ts {
			if unaudited(o, t.Figure) {
				continue // a part's: loadgen merge checks it on the audit
			}
			for i, r := range runs {
				v := t.value(r)
				if t.holds(v) {
					continue
				}
				f := Failure{Strategy: row.label, Threshold: t.String(), Got: t.render(v), Runs: len(runs)}
				if len(runs) > 1 {
					f.Run = i + 1
				}
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// Unchecked are the thresholds of ts that Check skips in o: in a part of
// a crowd, those on the audit's figures, which loadgen merge checks.
func Unchecked(o *scenario.Outcome, ts []Threshold) []Threshold {
	var out []Threshold
	for _, t := range ts {
		if unaudited(o, t.Figure) {
			out = append(out, t)
		}
	}
	return out
}

// render writes v in t's terms: "1.8%", "412ms", "3".
func (t Threshold) render(v float64) string {
	if t.Percent {
		return fmt.Sprintf("%.2f%%", v)
	}
	return formatFigure(t.Figure, v)
}

// labelled is a row with its name in messages.
type labelled struct {
	label string
	m     *scenario.StrategyResult
}

// labelledRows are o's rows, or a sweep's rows named with their rate.
func labelledRows(o *scenario.Outcome) []labelled {
	var out []labelled
	for _, m := range o.Strategies {
		out = append(out, labelled{string(m.Strategy), m})
	}
	for _, p := range o.Sweep {
		for _, m := range p.Strategies {
			out = append(out, labelled{fmt.Sprintf("%s at %s", m.Strategy, rateLabel(p.Rate)), m})
		}
	}
	return out
}
