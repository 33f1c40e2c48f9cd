package scenario

import (
	"fmt"
	"time"
)

// The sale with payments (Settings.Pay, PayWithin, LatePay): every row's
// product gets a pay window; a share of the winners pay within it, the
// rest never do, and their units go back on sale when the shops' sweeps
// expire their orders. The crowd itself is the second wave: it must keep
// coming for at least twice the window (payCrowdLasts), so that buyers
// still arrive after the first unpaid orders expire and buy their units
// again.

// payCrowdLasts is how many windows the crowd must outlast under --pay.
const payCrowdLasts = 2

// Paying reports whether s is a sale with payments.
func (s Settings) Paying() bool { return s.PayWithin > 0 }

// payProblems is Problems for the payment settings.
func (s Settings) payProblems() []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if !(s.Pay >= 0 && s.Pay <= 1) {
		add("pay: %v, want a share of the winners in 0..1", s.Pay)
	}
	if (s.Pay > 0 || s.LatePay) && s.PayWithin == 0 {
		add("pay: needs --pay-within, the window the winners have to pay in")
	}
	if s.PayWithin < 0 || s.PayWithin > time.Hour || s.PayWithin%time.Millisecond != 0 {
		add("pay-within: %v, want whole milliseconds in 0..1h (the shop takes pay_within_ms)", s.PayWithin)
	}
	if s.PayWithin > 0 && s.PerSecond() > 0 && s.Duration > 0 {
		lasts := min(s.Duration, time.Duration(float64(s.PlannedRequests())/s.PerSecond()*float64(time.Second)))
		if lasts < payCrowdLasts*s.PayWithin {
			add("pay-within: %v, but the crowd stops coming after %v: it must keep coming for %d windows so that returned units sell again; raise --users and --duration, or lower --rate",
				s.PayWithin, lasts.Round(time.Millisecond), payCrowdLasts)
		}
	}
	return bad
}

// payDelay is when winner n pays, after their order's answer: a time
// drawn within the window (up to 90% of it, leaving the answer's trip
// home), or, under LatePay, right at the deadline or up to 40 ms after
// it (10 ms before, to 40 ms after: the race a late payment runs).
func (s Settings) payDelay(u float64) time.Duration {
	if s.LatePay {
		return s.PayWithin + time.Duration((u*50-10)*float64(time.Millisecond))
	}
	return time.Duration(u * 0.9 * float64(s.PayWithin))
}
