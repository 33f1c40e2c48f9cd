package fault

import (
	"strings"
	"testing"
	"time"
)

// The crash clause states the figures the record holds: each kill's shop,
// pid, time, what it cut and refused, the pid it came back as, and the
// answered orders against their rows.
func TestCrashWhyStatesTheFigures(t *testing.T) {
	c := &Crash{Planned: 2, Answered: 97, WithoutOrder: 0, Kills: []CrashKill{
		{Shop: 1, PID: 41, NewPID: 52, At: 2 * time.Second, Back: 2300 * time.Millisecond, InFlight: 3, Cut: 2, Refused: 5},
	}}
	why := c.Why(Sale{})
	for _, want := range []string{"shop 2 (pid 41)", "at 2s", "3 requests in flight (2 got no answer)", "300ms later as pid 52",
		"5 clicks sent to it meanwhile", "1 of 2 kills made", "each of the 97 orders answered has its row"} {
		if !strings.Contains(why, want) {
			t.Errorf("why = %q, want %q", why, want)
		}
	}
	c.WithoutOrder, c.Kills[0].Back = 4, -1
	why = c.Why(Sale{})
	for _, want := range []string{"not back", "4 of the 97 orders answered have no row"} {
		if !strings.Contains(why, want) {
			t.Errorf("why = %q, want %q", why, want)
		}
	}
	if err := c.failed(); err != nil {
		t.Errorf("failed() = %v with no error recorded", err)
	}
	if c.Err = "restart: boom"; c.failed() == nil {
		t.Error("failed() = nil with an error recorded")
	}
}
