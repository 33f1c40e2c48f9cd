package fault

import (
	"context"
	"testing"
	"time"
)

// The waits a fault's goroutines share end at their condition or time,
// and, sooner, when the attack stops or the context ends.
func TestWaits(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	n := 0
	if !poll(t.Context(), nil, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("poll held after %d asks, want 3", n)
	}
	if poll(t.Context(), closed, func() bool { return false }) || poll(ended, nil, func() bool { return false }) {
		t.Error("poll held after the attack stopped or the context ended")
	}
	if !poll(ended, closed, func() bool { return true }) {
		t.Error("poll of a condition that holds at once: false")
	}
	if !waitUntil(t.Context(), nil, time.Now().Add(time.Millisecond)) {
		t.Error("waitUntil a moment from now: false")
	}
	if waitUntil(t.Context(), closed, time.Now().Add(time.Hour)) || waitUntil(ended, nil, time.Now().Add(time.Hour)) {
		t.Error("waitUntil an hour from now returned true after the attack stopped or the context ended")
	}
	if plural(1, "node", "nodes") != "node" || plural(0, "node", "nodes") != "nodes" {
		t.Error("plural")
	}
}
