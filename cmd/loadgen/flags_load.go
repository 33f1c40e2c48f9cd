package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// envPrefix starts every flag's environment variable: --rate is
// LOADGEN_RATE (package flagenv).
const envPrefix = "LOADGEN"

// loadFlags are the load tester's flags: pace, timing, repetition, pass
// criteria, and the embedded shops' limits.
type loadFlags struct {
	lockWait    time.Duration // --lock-wait: the embedded shops' product-lock wait
	maxInFlight int           // --max-in-flight: the embedded shops' admission limit
	buyerRate   float64       // --buyer-rate: the embedded shops' per-buyer rate limit
	buyerBurst  int           // --buyer-burst: its burst
	sweep       []vegeta.Rate // --sweep: the offered rates, if a sweep
	thresholds  []report.Threshold
}

// addLoadFlags registers the load tester's flags on fs. --rate writes
// c.settings.Rate and RatePer; the rest their own fields.
func addLoadFlags(fs *flag.FlagSet, c *config, d scenario.Settings) {
	c.settings.Rate, c.settings.RatePer = d.Rate, time.Second
	fs.Var(&rateFlag{s: &c.settings}, "rate", "requests per period, spread over the shops, as Vegeta writes it: 300/1s, 50/100ms, or a plain integer per second")
	fs.DurationVar(&c.settings.Timeout, "timeout", scenario.DefaultTimeout, "each request's timeout; a request without an answer by then counts as an error (0 timeout)")
	fs.Uint64Var(&c.settings.Workers, "workers", scenario.DefaultWorkers, "Vegeta's initial workers (senders); it adds more, up to --max-workers, when they are all waiting for answers")
	fs.Uint64Var(&c.settings.MaxWorkers, "max-workers", scenario.DefaultMaxWorkers, "the most Vegeta workers, so the most requests in flight at once")
	fs.IntVar(&c.settings.Count, "count", 1, "run each row this many times and report each figure as the median with min–max")
	fs.DurationVar(&c.lockWait, "lock-wait", fleet.DefaultLockWait, "without --targets: the embedded shops' product-lock wait, the longest an order waits for its lock (or at the shop's door, or for a redis-queue order's round trip to Redis) before 503 lock_timeout or busy (a running fleet has its own: shop --lock-wait)")
	fs.IntVar(&c.maxInFlight, "max-in-flight", app.DefaultMaxInFlightOrders, "without --targets: orders each embedded shop works on at once; more wait at the door up to --lock-wait, then 503 busy, and one that would wait more than half of it for the orders ahead gets 503 busy at once (negative: no limit; a running fleet has its own: shop --max-in-flight)")
	fs.Float64Var(&c.buyerRate, "buyer-rate", 0, "without --targets: orders per second one buyer may send to one embedded shop; the clicks beyond get 429 rate_limited (the anti-bot guard); 0: no limit, as the lesson rows need (a running fleet has its own: shop --buyer-rate)")
	fs.IntVar(&c.buyerBurst, "buyer-burst", 3, "with --buyer-rate, how many orders one buyer may send at once before the rate applies")
	fs.Var(&sweepFlag{rates: &c.sweep}, "sweep", fmt.Sprintf("run every row at each of these offered rates, comma-separated (250,500,1000,2000 or 50/100ms,...), and report goodput and latency against the rate; unless given, --users 0, --duration %v, --stock %d, --stall-rate 0, so that each point measures throughput, not a sold-out shop (default none)", scenario.SweepDuration, scenario.SweepStock))
	fs.Var(&thresholdFlag{list: &c.thresholds}, "threshold", "a pass criterion for every row, repeatable, in k6's spirit: p99<200ms, oversold==0, errors<1%, orders>=90; metrics: "+strings.Join(report.ThresholdMetrics(), ", ")+"; a failed one is printed with its row and the run exits 99 (default none)")
}

// checkLoad validates the load tester's flags that Settings does not hold.
func (c *config) checkLoad(given func(string) bool) []string {
	var bad []string
	if c.lockWait <= 0 || c.lockWait > time.Minute {
		bad = append(bad, fmt.Sprintf("lock-wait: %v, want more than 0 and at most 1m", c.lockWait))
	}
	if len(c.targets) > 0 && (given("lock-wait") || given("max-in-flight") || given("buyer-rate") || given("buyer-burst")) {
		bad = append(bad, "lock-wait, max-in-flight, buyer-rate, buyer-burst: only without --targets; a running fleet has its own (shop --lock-wait, --max-in-flight, --buyer-rate, --buyer-burst)")
	}
	if c.buyerRate < 0 || c.buyerBurst < 1 {
		bad = append(bad, fmt.Sprintf("buyer-rate: %v, buyer-burst: %d, want a rate of 0 (off) or more and a burst of 1 or more", c.buyerRate, c.buyerBurst))
	}
	if c.settings.Count == 0 {
		bad = append(bad, fmt.Sprintf("count: 0, want 1..%d runs of each row", scenario.MaxCount))
	}
	for _, r := range c.sweep {
		at := c.settings
		at.Rate, at.RatePer = r.Freq, r.Per
		for _, p := range at.Problems() {
			if strings.HasPrefix(p, "rate:") || strings.HasPrefix(p, "users:") {
				bad = append(bad, p)
			}
		}
	}
	return bad
}

// rateFlag is --rate: Vegeta's freq/period, or a plain integer per second.
type rateFlag struct{ s *scenario.Settings }

func (f *rateFlag) String() string {
	if f.s == nil {
		return ""
	}
	return scenario.FormatRate(f.s.VegetaRate())
}

func (f *rateFlag) Set(v string) error {
	r, err := scenario.ParseRate(v)
	if err != nil {
		return err
	}
	f.s.Rate, f.s.RatePer = r.Freq, r.Per
	return nil
}

// sweepFlag is --sweep: comma-separated rates.
type sweepFlag struct{ rates *[]vegeta.Rate }

func (f *sweepFlag) String() string {
	if f.rates == nil {
		return ""
	}
	s := make([]string, len(*f.rates))
	for i, r := range *f.rates {
		s[i] = scenario.FormatRate(r)
	}
	return strings.Join(s, ",")
}

func (f *sweepFlag) Set(v string) error {
	*f.rates = nil
	for _, p := range split(v) {
		r, err := scenario.ParseRate(p)
		if err != nil {
			return err
		}
		*f.rates = append(*f.rates, r)
	}
	if len(*f.rates) == 0 {
		return fmt.Errorf("%q: want rates, comma-separated", v)
	}
	return nil
}

// thresholdFlag is --threshold, repeatable. From the environment
// (LOADGEN_THRESHOLD) several are separated by commas.
type thresholdFlag struct{ list *[]report.Threshold }

func (f *thresholdFlag) String() string {
	if f.list == nil {
		return ""
	}
	s := make([]string, len(*f.list))
	for i, t := range *f.list {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

func (f *thresholdFlag) Set(v string) error {
	for _, p := range split(v) {
		t, err := report.ParseThreshold(p)
		if err != nil {
			return err
		}
		*f.list = append(*f.list, t)
	}
	return nil
}
