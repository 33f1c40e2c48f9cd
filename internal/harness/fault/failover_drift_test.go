package fault

import (
	"context"
	"testing"
	"time"
)

// The drift's summary: the peak over every reading, the time from the last
// kill to the first reading at 0 after the last positive one, and the last
// reading; the settling waits for readings at 0 taken after the last
// promotion, not for older ones.
func TestDriftSettle(t *testing.T) {
	s := func(sec float64, drift int) driftSample {
		return driftSample{time.Duration(sec * float64(time.Second)), drift}
	}
	done := make(chan struct{})
	close(done)
	w := &driftWatch{stop: func() {}, done: done, samples: []driftSample{
		s(1, 0), s(6.1, 3), s(6.5, 3), s(7.2, 0), s(8, 0), // kill 1 at 3.5 s, its phantom units lowered
		s(12, 0), s(13, 0), // kill 2 at 9 s, promoted at 11.5 s: no drift
	}}
	rounds := []FailoverRound{{At: 3500 * time.Millisecond, Promoted: 2500 * time.Millisecond}, {At: 9 * time.Second, Promoted: 2500 * time.Millisecond}}
	if got := w.quiet(11500 * time.Millisecond); got != time.Second {
		t.Errorf("quiet since the last promotion: got %v, want 1s (readings at 12 s and 13 s)", got)
	}
	if got := w.quiet(12500 * time.Millisecond); got != 0 {
		t.Errorf("quiet since 12.5 s: got %v, want 0 (one reading only)", got)
	}
	stopped := make(chan struct{})
	close(stopped)
	d := w.settle(context.Background(), stopped, rounds)
	if d.Peak != 3 || d.Repaired != 3*time.Second || d.End != 0 || d.Samples != 7 {
		t.Errorf("drift %+v, want peak 3, repaired 3s after the last kill (the reading at 12 s), end 0, 7 readings", d)
	}

	if d := sumDrift([]driftSample{s(6.1, 3), s(12, 2)}, rounds); d.Repaired != -1 || d.End != 2 {
		t.Errorf("unrepaired drift %+v, want repaired -1, end 2", d)
	}
	// Below 0 after the sale is units Redis lost, not a repair.
	if d := sumDrift([]driftSample{s(6.1, 3), s(12, -1), s(13, -1)}, rounds); d.Repaired != -1 || d.End != -1 {
		t.Errorf("drift that ends below 0 %+v, want repaired -1, end -1", d)
	}
}
