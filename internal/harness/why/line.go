// Package why says in one line why a row of the table came out as it did,
// from what the run measured: the shop's audit and events, the answers,
// the product's settings, and the faults' records. The line is composed of
// clauses, each stated next to the figures that back it:
//
//  1. each fault that fired says what it did (package fault, Record.Why);
//  2. late commits, if the product held some back (lateCommits);
//  3. the strategy's own clause: what guards its stock, then its figures
//     (mechanisms, a table with one entry per strategy);
//  4. what any row may add: orders answered and not written, batches,
//     locks lost, the errors it cost, an attack cut short (closing).
//
// Nothing is branched on a strategy and a fault together: a fault's
// clause and a strategy's clause each stand on their own figures.
package why

import (
	"fmt"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Settings are the product settings a why-line compares with each other
// and with what was measured.
type Settings struct {
	LockTTL, Work, Stall, LateCommit time.Duration
	StallRate                        float64
	// Batch is the most buyers one batch serves (batched rows).
	Batch int
}

// Row is what one row measured, as Line reads it.
type Row struct {
	Strategy strategy.Name
	Batched  bool
	Settings Settings
	Audit    tally.Audit
	Events   tally.Events
	Tally    tally.Answers
	// Drain is a queued row's drain (redis-queue), else nil.
	Drain *tally.Drain
	// Records are the faults' records of the row's attack.
	Records fault.Records
	// Lost counts the answered orders not written; Sent and Planned the
	// clicks sent and planned.
	Lost, Sent, Planned int
	Results             vegeta.Results
}

// Line says in one line why a row came out as it did: its clauses (see
// the package comment), joined by "; ". It is safe for concurrent use.
// Where each number comes from:
//
//   - overwritten sales are measured by the shop's audit: stock + sold −
//     initial stock. Each is a sale whose stock deduction another buyer,
//     inside the critical section at the same time, overwrote (both read
//     n, both wrote n−1). Zero means no two critical sections ever
//     overlapped on a sale.
//   - stalls are an expectation, not a count: the shop draws a stall for
//     each sale that passed its checks (a 201) with probability
//     StallRate, so StallRate × 201s critical sections are expected to
//     have stalled. Client-side latency cannot count them: buyers queued
//     behind a stall are as slow as the stalled one.
//   - late commits, fenced-out holders, lost locks and reservations given
//     back are counted by the shops (Events), summed over the fleet.
func Line(m Row) string {
	sale := fault.Sale{Strategy: m.Strategy, LockTTL: m.Settings.LockTTL, Work: m.Settings.Work, Audit: m.Audit, Results: m.Results}
	clauses := m.Records.Clauses(sale)
	if c := sentence("", lateCommits(m)); c != "" {
		clauses = append(clauses, c)
	}
	mech := mechanismOf(m.Strategy)
	clauses = append(clauses, sentence(mech.guard, states(m, mech.figures)))
	for _, f := range closing {
		if fc, ok := f(m); ok {
			clauses = append(clauses, fc.text)
		}
	}
	return strings.Join(clauses, "; ")
}

// sentence is a clause: what it is about, then its facts, comma-separated
// ("" with neither).
func sentence(about string, facts []fact) string {
	texts := make([]string, len(facts))
	for i, f := range facts {
		texts[i] = f.text
	}
	body := strings.Join(texts, ", ")
	switch {
	case about == "":
		return body
	case body == "":
		return about
	}
	return about + ": " + body
}

// A fact is one figure a clause states: its name and value, which tests
// pin, and the words that state it, which they do not.
type fact struct {
	name  string
	value float64
	text  string
}

// A figure reads one fact of a row; false when the row has nothing to say
// of it (a count that is zero where zero says nothing, a setting that was
// off).
type figure func(m Row) (fact, bool)

// states are the facts figures find in m, in order.
func states(m Row, figures []figure) []fact {
	var out []fact
	for _, f := range figures {
		if fc, ok := f(m); ok {
			out = append(out, fc)
		}
	}
	return out
}

// say is a fact with a value that is a count.
func say[N int | int64](name string, n N, format string, args ...any) fact {
	return fact{name: name, value: float64(n), text: fmt.Sprintf(format, args...)}
}

// closing are the clauses any row may end with.
var closing = []figure{
	func(m Row) (fact, bool) {
		return say("lost", m.Lost, "%d buyers answered 201 or 202 have no order", m.Lost), m.Lost > 0
	},
	func(m Row) (fact, bool) {
		ev := m.Events
		if !m.Batched || ev.Batches == 0 {
			return fact{}, false
		}
		return fact{name: "per_batch", value: float64(ev.BatchedBuyers) / float64(ev.Batches),
			text: fmt.Sprintf("batched: %d buyers answered in %d transactions under one lease each (%.1f per batch, at most %d)",
				ev.BatchedBuyers, ev.Batches, float64(ev.BatchedBuyers)/float64(ev.Batches), m.Settings.Batch)}, true
	},
	func(m Row) (fact, bool) {
		n := m.Events.LocksLost
		return say("locks_lost", n, "%d holders found their lock lost before writing and wrote nothing (503 lock_lost)", n), n > 0
	},
	func(m Row) (fact, bool) {
		n := m.Tally.ErrorCount()
		return say("errors", n, "cost: %s", errorSummary(m.Tally)), n > 0
	},
	func(m Row) (fact, bool) {
		return say("sent", m.Sent, "--duration ended the attack after %d of %d clicks", m.Sent, m.Planned), m.Sent < m.Planned
	},
}

// errorSummary lists the error answers, most frequent first, e.g.
// "503 lock_timeout×12, 503 unavailable×3".
func errorSummary(t tally.Answers) string {
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range t.Errors {
		all = append(all, kv{k, n})
	}
	slices.SortFunc(all, func(a, b kv) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.k, b.k)
	})
	parts := make([]string, len(all))
	for i, e := range all {
		parts[i] = fmt.Sprintf("%s×%d", e.k, e.n)
	}
	return strings.Join(parts, ", ")
}
