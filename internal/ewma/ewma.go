// Package ewma keeps an exponentially weighted moving average of
// durations: how long something has been taking lately. The shop's door
// (package httpapi) averages how long an order holds its slot, and a
// batched product's queue (package order) how long one batch takes; each
// sizes its queue by what it can serve in time.
package ewma

import (
	"sync/atomic"
	"time"
)

// Duration is a moving average of durations in which each new one weighs
// 1/8: it follows a change of load within a few dozen samples. The zero
// value is empty and ready to use. Safe for concurrent use.
type Duration struct{ ns atomic.Int64 }

// Add moves the average an eighth of the way toward d; the first d is the
// average.
func (a *Duration) Add(d time.Duration) {
	for {
		old := a.ns.Load()
		next := int64(d)
		if old > 0 {
			next = old + (int64(d)-old)/8
		}
		if a.ns.CompareAndSwap(old, next) {
			return
		}
	}
}

// Get returns the average: zero until the first Add.
func (a *Duration) Get() time.Duration { return time.Duration(a.ns.Load()) }
