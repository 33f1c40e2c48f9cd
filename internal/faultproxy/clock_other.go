//go:build !linux

package faultproxy

import "time"

// preciseClock: no timerfd here; sleepUntil uses Go's timers.
func preciseClock() *precise { return nil }

type precise struct{}

func (*precise) sleepUntil(time.Time, <-chan struct{}) bool { return true }
