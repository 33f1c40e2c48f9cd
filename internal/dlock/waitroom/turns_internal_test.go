package waitroom

import (
	"testing"
	"time"
)

// One slow acquire (a pause, a retransmission) among fast ones does not
// widen the room's hand-off window: the round trip fed to the smoothing is
// capped at a few times the estimate.
func TestOneSlowAcquireKeepsTheWindow(t *testing.T) {
	r := unstartedRoom(t, 1, 1)
	for range 20 {
		r.answered("k", false, time.Millisecond, 0)
	}
	r.answered("k", false, 500*time.Millisecond, 0)
	want := handOff + 10*time.Millisecond
	if _, got := r.inLine("k"); got > want {
		t.Errorf("hand-off window after one 500 ms acquire among 1 ms ones: %v, want at most %v", got, want)
	}
}
