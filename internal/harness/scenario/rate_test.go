package scenario

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want vegeta.Rate
	}{
		{"250", vegeta.Rate{Freq: 250, Per: time.Second}},
		{"300/1s", vegeta.Rate{Freq: 300, Per: time.Second}},
		{"50/100ms", vegeta.Rate{Freq: 50, Per: 100 * time.Millisecond}},
		{"5/s", vegeta.Rate{Freq: 5, Per: time.Second}},
		{"600/m", vegeta.Rate{Freq: 600, Per: time.Minute}},
	} {
		got, err := ParseRate(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, _ := ParseRate(FormatRate(got)); back != got {
			t.Errorf("FormatRate(%v) = %q, which reads back as %v", got, FormatRate(got), back)
		}
	}
	for _, bad := range []string{"", "infinity", "ten", "50/", "50/fast", "50/-1s", "50/0s"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) = nil error, want one", bad)
		}
	}
}

func TestPerSecond(t *testing.T) {
	s := DefaultSettings()
	s.Rate, s.RatePer = 50, 100*time.Millisecond
	if got := s.PerSecond(); got != 500 {
		t.Errorf("50/100ms: PerSecond = %v, want 500", got)
	}
	s.RatePer = 0
	if got := s.PerSecond(); got != 50 {
		t.Errorf("50 with no period: PerSecond = %v, want 50", got)
	}
}
