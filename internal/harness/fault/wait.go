package fault

import (
	"context"
	"time"
)

// poll asks cond every watchEveryPass until it holds; it reports false if
// stopped closes or ctx ends first.
func poll(ctx context.Context, stopped <-chan struct{}, cond func() bool) bool {
	return pollEvery(ctx, stopped, watchEveryPass, cond)
}

// pollEvery is poll, asking every d.
func pollEvery(ctx context.Context, stopped <-chan struct{}, d time.Duration, cond func() bool) bool {
	for !cond() {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-stopped:
			t.Stop()
			return false
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	return true
}

// waitUntil waits until t; false if stopped closed or ctx ended first.
func waitUntil(ctx context.Context, stopped <-chan struct{}, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-stopped:
		return false
	case <-ctx.Done():
		return false
	}
}

// plural picks one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
