package fault

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Why describes an attack's --crash kills with what the run counted: when
// each shop was killed, what it had in flight, when it served again and
// how many clicks got no answer meanwhile, and whether every order the
// buyers were told of has its row.
func (c *Crash) Why(Sale) string {
	var b strings.Builder
	if len(c.Kills) == 0 {
		fmt.Fprintf(&b, "no shop was killed: the attack ended before the first of %d kills was due", c.Planned)
	}
	for k, kill := range c.Kills {
		if k > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "shop %d (pid %d) SIGKILLed at %v with %d %s in flight (%d got no answer)",
			kill.Shop+1, kill.PID, kill.At.Round(10*time.Millisecond), kill.InFlight, plural(kill.InFlight, "request", "requests"), kill.Cut)
		if kill.Back >= 0 {
			fmt.Fprintf(&b, ", serving again %v later as pid %d", (kill.Back - kill.At).Round(10*time.Millisecond), kill.NewPID)
		} else {
			b.WriteString(", not back")
		}
		fmt.Fprintf(&b, ", %d %s sent to it meanwhile got no answer", kill.Refused, plural(kill.Refused, "click", "clicks"))
	}
	if len(c.Kills) < c.Planned && len(c.Kills) > 0 {
		fmt.Fprintf(&b, "; %d of %d kills made", len(c.Kills), c.Planned)
	}
	switch {
	case c.WithoutOrder < 0:
		fmt.Fprintf(&b, "; whether the %d orders answered have their rows is unknown (the database could not be read)", c.Answered)
	case c.WithoutOrder == 0:
		fmt.Fprintf(&b, "; each of the %d orders answered has its row", c.Answered)
	default:
		fmt.Fprintf(&b, "; %d of the %d orders answered have no row", c.WithoutOrder, c.Answered)
	}
	switch {
	case c.Drift == nil:
	case *c.Drift == 0:
		fmt.Fprintf(&b, "; Redis's stock read back at the database's %v after the audit", c.DriftWaited.Round(100*time.Millisecond))
	default:
		fmt.Fprintf(&b, "; Redis's stock still %+d off the database's after waiting %v", *c.Drift, c.DriftWaited.Round(100*time.Millisecond))
	}
	if c.Err != "" {
		b.WriteString(" (" + c.Err + ")")
	}
	return b.String()
}

// failed is the error of a kill or restart that went wrong, nil if none
// did (or c is nil).
func (c *Crash) failed() error {
	if c == nil || c.Err == "" {
		return nil
	}
	return errors.New(c.Err)
}
