package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond every few milliseconds until it holds, and fails t
// with what it waited for if it does not within d: the way a test waits on
// a condition instead of a sleep. Call it from the test's goroutine.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
