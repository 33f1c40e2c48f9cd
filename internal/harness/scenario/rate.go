package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// ParseRate reads a rate as Vegeta's own -rate flag does: "300/1s",
// "50/100ms", "5/s" (a bare unit means one of it), or a plain integer,
// which is per second. Unlike Vegeta it has no "infinity": the scenario
// paces its crowd, and an unpaced attack measures the load generator, not
// the shops (see Ceiling for that). A count below 1 parses; Settings'
// Problems refuses it with the other problems of the command line.
func ParseRate(v string) (vegeta.Rate, error) {
	freq, per, found := strings.Cut(strings.TrimSpace(v), "/")
	if !found {
		per = "1s"
	}
	r := vegeta.Rate{}
	n, err := strconv.Atoi(freq)
	if err != nil {
		return r, fmt.Errorf("%q: want requests per period, as Vegeta writes it: 300/1s, 50/100ms, or a plain integer per second", v)
	}
	switch per {
	case "ns", "us", "µs", "ms", "s", "m", "h":
		per = "1" + per
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return r, fmt.Errorf("%q: the period %q is not a duration above 0 such as 1s or 100ms", v, per)
	}
	return vegeta.Rate{Freq: n, Per: d}, nil
}

// FormatRate writes r as ParseRate reads it: "250" for a rate per second,
// "50/100ms" otherwise.
func FormatRate(r vegeta.Rate) string {
	if r.Per == time.Second || r.Per == 0 {
		return strconv.Itoa(r.Freq)
	}
	return fmt.Sprintf("%d/%v", r.Freq, r.Per)
}

// VegetaRate is the attack's pace: Rate requests every RatePer (a second
// when RatePer is zero).
func (s Settings) VegetaRate() vegeta.Rate {
	per := s.RatePer
	if per <= 0 {
		per = time.Second
	}
	return vegeta.Rate{Freq: s.Rate, Per: per}
}

// PerSecond is the attack's pace in requests per second.
func (s Settings) PerSecond() float64 {
	r := s.VegetaRate()
	return float64(r.Freq) / r.Per.Seconds()
}
