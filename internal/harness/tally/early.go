package tally

import (
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// EarlySoldOut counts the buyers told "sold out" while a unit was left,
// as the answers' timestamps prove it: a sold-out answer that arrived
// before an order that was then sold had even been sent (its request's
// Timestamp). That order's unit was in the stock when the sold-out
// answer was given, since a sale's stock only goes down: the buyer was
// turned away from a unit that was there. A sold-out answer that crossed
// a later order in flight is not counted, which makes the count a lower
// bound that a clock can never inflate: both times are the load
// generator's own. Results of several generators (the parts of a crowd,
// each with its own attack name, Result.Attack) are compared only with
// their own generator's: two machines' clocks may differ by more than a
// request takes. It is safe for concurrent use on results no one writes.
//
// It holds for strategies whose stock only goes down (sql-atomic, with
// or without buckets); one that gives units back (redis-decr after a
// failed write) may rightly say sold out before a given-back unit sells.
func EarlySoldOut(results []vegeta.Result) int {
	lastSent := map[string]time.Time{} // by attack: the latest send of a request that got an order
	for i := range results {
		r := &results[i]
		if k := Classify(r); (k == KindCreated || k == KindQueued) && r.Timestamp.After(lastSent[r.Attack]) {
			lastSent[r.Attack] = r.Timestamp
		}
	}
	n := 0
	for i := range results {
		r := &results[i]
		if Classify(r) == KindSoldOut && r.Timestamp.Add(r.Latency).Before(lastSent[r.Attack]) {
			n++
		}
	}
	return n
}
