package scenario

import (
	"fmt"
	"math"
	"time"
)

// Defaults of the load tester's settings, used where Settings leaves them
// zero.
const (
	// DefaultTimeout is each request's timeout: a shop that hangs shows as
	// failed requests ("0 timeout"), not as a run that never ends.
	DefaultTimeout = 30 * time.Second
	// DefaultWorkers are the senders Vegeta starts with; it adds more, up
	// to DefaultMaxWorkers, when they are all waiting for answers.
	DefaultWorkers    = 64
	DefaultMaxWorkers = 8192
	// MaxCount bounds --count.
	MaxCount = 50
)

// timeout, workers, maxWorkers and count are the settings with zero
// replaced by the default.
func (s Settings) timeout() time.Duration {
	if s.Timeout == 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

func (s Settings) workers() uint64 {
	if s.Workers == 0 {
		return min(DefaultWorkers, s.maxWorkers())
	}
	return s.Workers
}

func (s Settings) maxWorkers() uint64 {
	if s.MaxWorkers == 0 {
		return DefaultMaxWorkers
	}
	return s.MaxWorkers
}

// Runs is how many times each row runs (Count, at least 1).
func (s Settings) Runs() int { return max(s.Count, 1) }

// Open reports whether the crowd is an open model (Users 0): a fresh buyer
// for every click, at the rate, until Duration is up.
func (s Settings) Open() bool { return s.Users == 0 }

// openClicks is how many clicks an open-model crowd makes: the rate times
// the duration.
func (s Settings) openClicks() int {
	n := math.Ceil(s.PerSecond() * s.Duration.Seconds())
	if n > MaxUsers || math.IsNaN(n) {
		return MaxUsers + 1
	}
	return int(n)
}

// loadProblems is Problems for the load tester's settings.
func (s Settings) loadProblems() []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if s.RatePer < 0 {
		add("rate: period %v, want more than 0", s.RatePer)
	}
	if s.Timeout < 0 {
		add("timeout: %v, want more than 0 (0: %v)", s.Timeout, DefaultTimeout)
	}
	if s.MaxWorkers > 0 && s.Workers > s.MaxWorkers {
		add("workers: %d, more than --max-workers %d", s.Workers, s.MaxWorkers)
	}
	if s.Count < 0 || s.Count > MaxCount {
		add("count: %d, want 1..%d runs of each row", s.Count, MaxCount)
	}
	if s.Open() && s.Duration > 0 && s.Rate > 0 && s.openClicks() > MaxUsers {
		add("users: 0 (a fresh buyer per click) at %.0f req/s for %v is more than %d clicks; shorten --duration", s.PerSecond(), s.Duration, MaxUsers)
	}
	return bad
}
