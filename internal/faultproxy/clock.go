package faultproxy

import (
	"time"
)

// sleepUntil waits until due; false if done closed first. It is the delay
// line's one wait: on Linux a timerfd wakes it at due (clock_linux.go),
// elsewhere a Go timer does (clock_other.go).
func sleepUntil(due time.Time, done <-chan struct{}) bool {
	wait := time.Until(due)
	if wait <= 0 {
		return true
	}
	if c := preciseClock(); c != nil {
		return c.sleepUntil(due, done)
	}
	return timerSleep(wait, done)
}

// timerSleep waits d on a Go timer; false if done closed first. An idle Go
// process wakes from its timers on a millisecond grid (its poller sleeps in
// whole milliseconds), so a wait under a millisecond lasts about one.
func timerSleep(d time.Duration, done <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
