package scenario

import (
	"context"
	"testing"
	"time"
)

// Ceiling runs and measures. The figure itself means little under the race
// detector and beside other tests; `go run ./cmd/loadgen --calibrate`
// prints the real measurement (about 30,000 req/s on a 2-core machine,
// against a default --rate of a few hundred).
func TestCeilingMeasures(t *testing.T) {
	c, err := Ceiling(context.Background(), 300*time.Millisecond, 16)
	if err != nil {
		t.Fatalf("Ceiling: %v", err)
	}
	t.Logf("ceiling: %.0f req/s with %d workers, p99 %v (race detector on: slower than a real run)", c.Rate, c.Workers, c.P99)
	if c.Success != 1 {
		t.Errorf("success %.3f, want 1", c.Success)
	}
	if c.Requests == 0 || c.Rate <= 0 {
		t.Errorf("ceiling: %d requests at %.0f req/s, want some", c.Requests, c.Rate)
	}
}
