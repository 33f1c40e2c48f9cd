package main

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// pings is how many PINGs roundTrip times, one after another.
const pings = 21

// roundTrip is what one round trip from the clients to a server costs:
// the median of PINGs to the first Redis node, through the network when
// there is one. A simulated RTT is a timer on each side, and timers are
// late by up to the scheduler's granularity: this says what the run got,
// not what --rtt asked for. ok is false without Redis, or if a PING fails.
func roundTrip(ctx context.Context, c *redis.Client) (d time.Duration, ok bool) {
	if c == nil {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(ctx, askWithin)
	defer cancel()
	if c.Ping(ctx).Err() != nil { // a pooled connection, made before the timing
		return 0, false
	}
	took := make([]time.Duration, pings)
	for i := range took {
		start := time.Now()
		if c.Ping(ctx).Err() != nil {
			return 0, false
		}
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	return took[pings/2], true
}
