package fault

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// A round after which a click was answered 201 or 409 resumed then; one
// whose promotion came after the last click was sent is told apart from
// one after which the shops never answered again, and the totals leave it
// out.
func TestFailoverResumed(t *testing.T) {
	t0 := time.Date(2025, 11, 11, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	results := vegeta.Results{
		{Code: 503, Timestamp: at(1), Latency: time.Millisecond},
		{Code: 201, Timestamp: at(3), Latency: 500 * time.Millisecond},
		{Code: 503, Timestamp: at(8), Latency: time.Millisecond},
		{Code: 503, Timestamp: at(10), Latency: time.Millisecond}, // the last click
	}
	f := &Failover{Planned: 3, Rounds: []FailoverRound{
		{killed: at(0), Promoted: 2 * time.Second},  // resumed at 3.5 s
		{killed: at(5), Promoted: 2 * time.Second},  // clicks after its promotion, none sold
		{killed: at(9), Promoted: 2 * time.Second}}} // promoted after the last click
	f.measureResumed(results)
	want := []struct {
		resumed    time.Duration
		afterCrowd bool
	}{{3500 * time.Millisecond, false}, {-1, false}, {-1, true}}
	for i, w := range want {
		if r := f.Rounds[i]; r.Resumed != w.resumed || r.AfterCrowd != w.afterCrowd {
			t.Errorf("round %d: resumed %v, after the crowd %v; want %v, %v", i+1, r.Resumed, r.AfterCrowd, w.resumed, w.afterCrowd)
		}
	}
	if _, _, resumed := f.Totals(); resumed != -1 {
		t.Errorf("totals: resumed %v, want -1 (round 2 never resumed)", resumed)
	}
	f.Rounds = append(f.Rounds[:1], f.Rounds[2])
	if _, _, resumed := f.Totals(); resumed != 3500*time.Millisecond {
		t.Errorf("totals without round 2: resumed %v, want 3.5s (round 3 left out)", resumed)
	}
}
