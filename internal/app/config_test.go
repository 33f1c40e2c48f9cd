package app

import "testing"

// TestMaxInFlightOrders checks what Config.MaxInFlightOrders means: zero is
// the default, negative is no limit (passed on to httpapi.Deps, which reads
// zero or less as no limit), anything else is the limit.
func TestMaxInFlightOrders(t *testing.T) {
	tests := []struct {
		name string
		in   int
		want int
	}{
		{"zero: the default", 0, DefaultMaxInFlightOrders},
		{"a limit", 3, 3},
		{"negative: no limit", -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Config{MaxInFlightOrders: tt.in}).MaxInFlight(); got != tt.want {
				t.Errorf("MaxInFlight() with MaxInFlightOrders %d = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}
