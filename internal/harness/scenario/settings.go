package scenario

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/netsim"
)

// ErrInvalidSettings is wrapped by every error Settings.Validate returns.
var ErrInvalidSettings = errors.New("scenario: invalid settings")

// Settings describe one run of the 双11 scenario: the crowd, the pace, and
// the product every strategy sells. A Settings value is plain data; copy it
// freely. The report package writes it to report.json with explicit units.
type Settings struct {
	// Strategies are the rows to run, in order: strategies, alone or batched
	// (Strategy); each gets a fresh product.
	Strategies []Strategy
	// Users is the number of distinct buyers in the crowd.
	Users int
	// Stock is the number of units each strategy's product starts with; in a
	// catalogue (Products above 1), the units of all its products
	// together, split evenly (stockOf).
	Stock int
	// Products is how many products each row sells (0 or 1: one); Skew
	// the Zipf exponent that spreads the buyers over them (catalogue.go).
	Products int
	Skew     float64
	// Clicks is the most times one buyer clicks "buy"; each buyer clicks
	// 1..Clicks times (drawn from Seed), all within ClickWindow.
	Clicks int
	// ClickWindow is how close together one buyer's repeated clicks land.
	ClickWindow time.Duration
	// Rate is the request rate of every attack, per second (Vegeta's
	// constant pacer).
	Rate int
	// Duration caps each attack; an attack ends sooner once every buyer
	// has clicked.
	Duration time.Duration
	// LockTTL is the product's lock TTL (lock_ttl_ms).
	LockTTL time.Duration
	// Work is the simulated business latency inside the critical section
	// (work_ms).
	Work time.Duration
	// Stall is the rare, long pause inside the critical section
	// (stall_ms): a GC pause or a slow payment call.
	Stall time.Duration
	// StallRate is the probability that one critical section stalls.
	StallRate float64
	// LateCommit, when above zero, makes some orders hold back their
	// commit and their lock renewals this long after their statements ran,
	// then commit regardless of the lock (late_commit_ms): the fault that
	// breaks a lease without a fencing token.
	LateCommit time.Duration
	// LateCommitEvery chooses the late orders: in each shop, the first of
	// the product's orders to reach its commit, then every
	// LateCommitEvery-th (late_commit_every).
	LateCommitEvery int
	// Seed makes the crowd (who clicks how often, in which order, on which
	// shop) reproducible.
	Seed uint64
	// Batch is the most buyers one batch serves in the batched strategies
	// (batch_max).
	Batch int
	// Buckets splits a sql-atomic row's stock over that many buckets
	// (buckets; 0 or 1: one row), unless its strategy names its own ("+kK").
	Buckets int
	// Faults are the run's faults (package fault), those that are on,
	// in the order each attack arms them; their values are read-only
	// once the run starts.
	Faults []fault.Fault
	// RTT is the simulated round-trip time on the embedded shops' links
	// to their backends (package netsim; rtt); zero: loopback as it is.
	RTT netsim.RTT
	// Pay is the share of the winners that pay for their order within
	// PayWithin, the products' pay window (pay_within_ms; zero: orders
	// final at once); the rest never pay. LatePay sends every payment
	// right at or just after its deadline (settings_pay.go).
	Pay       float64
	PayWithin time.Duration
	LatePay   bool

	// The load tester's settings (settings_load.go): the pace's period,
	// Vegeta's timeout and workers, and how many times each row runs.
	RatePer    time.Duration
	Timeout    time.Duration
	Workers    uint64
	MaxWorkers uint64
	Count      int
	// Part is the share of the crowd this generator sends (part.go); the
	// zero Part is the whole crowd.
	Part Part
}

// Limits of Settings that Validate enforces: beyond them a run would not
// fit in memory or in the shop's own limits (package stock).
const (
	MaxUsers  = 1_000_000
	MaxStock  = 10_000_000
	MaxClicks = 100
	MaxRate   = 1_000_000
)

// DefaultSettings returns the 双11 defaults, tuned on a 2-core machine
// with the embedded backends so that every run shows the lesson and the
// whole run takes about a minute:
//
//   - 660 buyers clicking 1..3 times (about 1,330 requests, under five
//     seconds) at 280 req/s for 100 units, so that the thirteen rows fit in
//     70 seconds: the crowd outnumbers the stock, and the rate stays
//     below what three in-process shops on embedded Redis and SQLite serve
//     (every request, sold out or not, takes the product lock).
//   - 2 ms of work inside the critical section: off oversells because
//     buyers overlap inside it.
//   - 8% of sales stall for 300 ms, three times the 100 ms TTL: a naive
//     lock expires under its holder about eight times per 100 sales (the
//     chance of a run without a single stall is 0.92^100, 0.02%), while
//     lua and redlock renew through it. The stalls are also the cost the
//     safe strategies pay: buyers queued behind a stalled holder may time out
//     (503 lock_timeout) or be turned away at the shop's door.
func DefaultSettings() Settings {
	return Settings{
		Strategies:  Strategies(),
		Users:       660,
		Stock:       100,
		Clicks:      3,
		ClickWindow: 5 * time.Millisecond,
		Rate:        280,
		Duration:    10 * time.Second,
		LockTTL:     100 * time.Millisecond,
		Work:        2 * time.Millisecond,
		Stall:       300 * time.Millisecond,
		StallRate:   0.08,
		Seed:        2011,
		Batch:       64,
		Products:    1,
		Skew:        DefaultSkew,

		LateCommit:      0,
		LateCommitEvery: 10,
	}
}

// Validate reports every nonsense value at once, in an error wrapping
// ErrInvalidSettings, so that a run never starts with settings it cannot
// honour.
func (s Settings) Validate() error {
	if bad := s.Problems(); len(bad) > 0 {
		return fmt.Errorf("%w:\n  %s", ErrInvalidSettings, strings.Join(bad, "\n  "))
	}
	return nil
}

// Problems lists what is wrong with s, one line per problem, each starting
// with the flag's name ("users: -5, want at least 1 buyer"); nil if s is
// good.
func (s Settings) Problems() []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if len(s.Strategies) == 0 {
		add("strategies: need at least one of %s", StrategyList())
	}
	seen := map[Strategy]bool{}
	for _, m := range s.Strategies {
		if _, err := ParseStrategy(string(m)); err != nil {
			add("strategies: %v", err)
		} else if seen[m] {
			add("strategies: %q listed twice", m)
		}
		seen[m] = true
	}
	between := func(name string, v, lo, hi int, unit string) {
		if v < lo || v > hi {
			add("%s: %d, want %d..%d %s", name, v, lo, hi, unit)
		}
	}
	between("users", s.Users, 0, MaxUsers, "buyers (0: a fresh buyer for every click)")
	between("stock", s.Stock, 1, MaxStock, "units")
	between("clicks", s.Clicks, 1, MaxClicks, "clicks per buyer")
	between("rate", s.Rate, 1, MaxRate, "requests per second")
	if s.ClickWindow < 0 {
		add("click window: %v, want 0 or more", s.ClickWindow)
	}
	if s.Duration <= 0 {
		add("duration: %v, want more than 0", s.Duration)
	}
	// The shop takes these in whole milliseconds, within its own limits.
	millis := func(name string, d, lo, hi time.Duration) {
		switch {
		case d < lo || d > hi:
			add("%s: %v, want %v..%v", name, d, lo, hi)
		case d%time.Millisecond != 0:
			add("%s: %v, want whole milliseconds (the shop takes %s_ms)", name, d, strings.ReplaceAll(name, "-", "_"))
		}
	}
	millis("lock-ttl", s.LockTTL, 10*time.Millisecond, time.Minute)
	millis("work", s.Work, 0, 10*time.Second)
	millis("stall", s.Stall, 0, time.Minute)
	if !(s.StallRate >= 0 && s.StallRate <= 1) {
		add("stall-rate: %v, want a probability in 0..1", s.StallRate)
	}
	millis("late-commit", s.LateCommit, 0, time.Minute)
	between("late-commit-every", s.LateCommitEvery, 1, 1_000_000, "orders")
	between("batch", s.Batch, 1, 256, "buyers per batch")
	if s.Buckets != 0 {
		between("buckets", s.Buckets, 1, 256, "stock buckets")
	}
	bad = append(bad, s.loadProblems()...)
	bad = append(bad, s.catalogueProblems()...)
	bad = append(bad, s.payProblems()...)
	return append(bad, fault.Problems(s.Faults, fault.Plan{Rows: s.rows(), Bucketed: s.bucketed()})...)
}

// LateCommitUsers is the crowd a late-commit run sells to unless told
// otherwise. Each held-back commit keeps the hot row (on SQLite, the whole
// database) for its whole delay, and with about a dozen of them the row is
// held for seconds: DefaultSettings' 660 buyers (under five seconds at 280 req/s)
// then write little more than the stock, and a lost update only shows as an
// oversold unit once the stock has run out. 1,200 buyers click about 2,400
// times, under ten seconds, the default Duration: the sale sells out every
// time, and lua and redlock's lost updates are counted as what they are,
// units sold that did not exist.
const LateCommitUsers = 1200

// PlannedRequests is the number of clicks the crowd makes, the most an
// attack sends.
func (s Settings) PlannedRequests() int { return len(newCrowd(s).clicks) }
