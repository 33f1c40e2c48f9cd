package scenario

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The run's plumbing, against the test double: every click is sent once,
// every answer is counted, the audit is read, the progress line is printed.
func TestRunAgainstFakeShop(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Strategies = []Strategy{Strategy(strategy.Lua), Strategy(strategy.Off)}
	s.Users, s.Stock, s.Rate, s.Duration = 200, 50, 2000, 10*time.Second
	var progress bytes.Buffer
	f := fleet.ExternalFleet([]string{srv.URL, srv.URL + "/"}, "tok", nil)

	out, err := Run(context.Background(), s, f, Options{Progress: &progress})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := len(out.Strategies), 2; got != want {
		t.Fatalf("strategies run: got %d, want %d", got, want)
	}
	for _, m := range out.Strategies {
		if m.Sent != m.Planned || m.Tally.Requests != m.Planned || len(m.Results) != m.Planned {
			t.Errorf("%s: planned %d, sent %d, answered %d, results %d; want all equal", m.Strategy, m.Planned, m.Sent, m.Tally.Requests, len(m.Results))
		}
		if m.Tally.Created != s.Stock || m.Audit.Orders != s.Stock || m.Audit.Stock != 0 {
			t.Errorf("%s: 201s %d, audit orders %d, stock left %d; want %d, %d, 0", m.Strategy, m.Tally.Created, m.Audit.Orders, m.Audit.Stock, s.Stock, s.Stock)
		}
		if m.Tally.SoldOut+m.Tally.DupRejected()+m.Tally.Created != m.Tally.Requests {
			t.Errorf("%s: answers %+v do not add up to %d", m.Strategy, m.Tally, m.Tally.Requests)
		}
		if m.Why == "" {
			t.Errorf("%s: no why-line", m.Strategy)
		}
		if !strings.Contains(progress.String(), string(m.Strategy)) {
			t.Errorf("progress output has no line for %s:\n%s", m.Strategy, progress.String())
		}
	}
	if got := out.Unsafe(); len(got) != 0 {
		t.Errorf("Unsafe() = %q, want none", got)
	}
}

func TestRunStopsWhenDurationEnds(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Strategies = []Strategy{Strategy(strategy.Lua)}
	s.Users, s.Rate, s.Duration = 1000, 100, 300*time.Millisecond
	out, err := Run(context.Background(), s, fleet.ExternalFleet([]string{srv.URL}, "tok", nil), Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	m := out.Strategies[0]
	if m.Sent >= m.Planned || m.Sent < 20 || m.Sent > 40 {
		t.Fatalf("sent %d of %d in 300ms at 100/s, want about 30", m.Sent, m.Planned)
	}
	if !strings.Contains(m.Why, "--duration ended the attack") {
		t.Errorf("why-line %q does not say the attack was cut short", m.Why)
	}
}

func TestRunRefusesBadFleet(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Users = 10
	_, err := Run(context.Background(), s, fleet.ExternalFleet([]string{srv.URL}, "wrong", nil), Options{})
	if !errors.Is(err, fleet.ErrShop) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Run with a wrong token: %v, want fleet.ErrShop with the 401", err)
	}
	for _, f := range []fault.Fault{fault.RedlockKill(2), &fault.EmptyRestart{Nodes: 3}, fault.EtcdKill(1),
		&fault.SentinelFailover{Enabled: true, Rounds: 1}, &fault.ShopCrash{Kills: 1}} {
		s.Faults = []fault.Fault{f}
		_, err = Run(context.Background(), s, fleet.ExternalFleet([]string{srv.URL}, "tok", nil), Options{})
		if !errors.Is(err, fault.ErrNoControl) {
			t.Errorf("Run with --%s and no control over the fleet: %v, want fault.ErrNoControl", fault.Name(f), err)
		}
	}
}
