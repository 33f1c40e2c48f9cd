package scenario

import (
	"context"
	"errors"
	"flag"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// probe is a fault of the test's own: it strikes one row, counts what the
// attack asks of it, and records a clause.
type probe struct {
	row      strategy.Name
	armErr   error
	armed    atomic.Int32
	stops    atomic.Int32
	settled  atomic.Int32
	stopped  chan struct{} // Attack.Stopped, closed before Stop
	attacked *fault.Attack
}

func (p *probe) Flags(fs *flag.FlagSet)             { fs.Bool("probe", true, "") }
func (p *probe) On() bool                           { return true }
func (p *probe) Strikes(st strategy.Name) bool      { return st == p.row }
func (p *probe) Check(fault.Plan) []string          { return nil }
func (p *probe) Ready(*fleet.Fleet) (string, error) { return "probed", nil }
func (p *probe) Breaks(st strategy.Name, _ time.Duration) bool {
	return st == p.row
}

func (p *probe) Arm(_ context.Context, a *fault.Attack) (fault.Armed, error) {
	if p.armErr != nil {
		return nil, p.armErr
	}
	p.armed.Add(1)
	p.attacked = a
	return armedProbe{p}, nil
}

type armedProbe struct{ p *probe }

func (a armedProbe) Stop(_ context.Context, results vegeta.Results) (fault.Record, error) {
	select {
	case <-a.p.attacked.Stopped:
	default:
		return nil, errors.New("stopped before the attack was over")
	}
	a.p.stops.Add(1)
	return probed(len(results)), nil
}

func (a armedProbe) Settle(_ context.Context, au *tally.Audit, lost int) error {
	a.p.settled.Add(1)
	return nil
}

// probed is the probe's record: how many answers it was given.
type probed int

func (n probed) Why(s fault.Sale) string { return "PROBE saw " + string(s.Strategy) }

// The attack arms a fault in the rows it strikes alone, stops it once the
// attack is over with every answer (its record counts them), settles it after
// the audit, and opens the row's why-line with its clause; the run says
// how it struck and holds no row to what it breaks.
func TestRunArmsTheFaultsOfEachRow(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Strategies = []Strategy{Strategy(strategy.Lua), Strategy(strategy.Off)}
	s.Users, s.Stock, s.Rate = 40, 10, 1000
	p := &probe{row: strategy.Lua}
	s.Faults = []fault.Fault{p}
	out, err := Run(t.Context(), s, fleet.ExternalFleet([]string{srv.URL}, "tok", nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lua, off := out.Strategies[0], out.Strategies[1]
	if p.armed.Load() != 1 || p.stops.Load() != 1 || p.settled.Load() != 1 {
		t.Errorf("armed %d, stopped %d, settled %d times; want once each, in the lua row", p.armed.Load(), p.stops.Load(), p.settled.Load())
	}
	if rec := fault.Find[probed](lua.Records); int(rec) != len(lua.Results) || !strings.HasPrefix(lua.Why, "PROBE saw lua; ") {
		t.Errorf("lua's record %v, why %q; want the probe's, first", lua.Records, lua.Why)
	}
	if len(off.Records) != 0 || strings.Contains(off.Why, "PROBE") {
		t.Errorf("off's records %v, why %q: the probe does not strike off", off.Records, off.Why)
	}
	if p.attacked.Strategy != strategy.Lua || p.attacked.Product != lua.ProductID || p.attacked.Expected <= 0 {
		t.Errorf("the probe was told %+v", p.attacked)
	}
	if len(out.FaultMethods) != 1 || out.FaultMethods[0] != "probe: probed" {
		t.Errorf("fault methods %q, want the probe's", out.FaultMethods)
	}
}

// A fault that cannot be armed ends the attack before its first click;
// one the fleet gives no control to ends the run before its first
// attack. (Two faults never strike one row: the run refuses them; arm
// still stops those armed before one that fails.)
func TestRunWhenAFaultCannotStrike(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Strategies, s.Users = []Strategy{Strategy(strategy.Lua)}, 10
	s.Faults = []fault.Fault{&probe{row: strategy.Lua, armErr: errors.New("no nodes")}}
	out, err := Run(t.Context(), s, fleet.ExternalFleet([]string{srv.URL}, "tok", nil), Options{})
	if err == nil || !strings.Contains(err.Error(), "no nodes") || len(out.Strategies) != 1 || out.Strategies[0].Sent != 0 {
		t.Fatalf("Run = %v; want the arming error and a row without a click", err)
	}
	first := &probe{row: strategy.Lua}
	s.Faults = []fault.Fault{first, &probe{row: strategy.Lua, armErr: errors.New("no nodes")}}
	stopped := make(chan struct{})
	armed, err := s.arm(t.Context(), &fault.Attack{Strategy: strategy.Lua, Stopped: stopped})
	close(stopped)
	if err == nil || len(armed) != 1 {
		t.Fatalf("arm = %d armed, %v; want the first armed and the second's error", len(armed), err)
	}
	res := &StrategyResult{}
	if err := stopFaults(t.Context(), armed, res); err != nil || first.stops.Load() != 1 || len(res.Records) != 1 {
		t.Errorf("stopFaults = %v, stops %d, records %v; want the first stopped and recorded", err, first.stops.Load(), res.Records)
	}
	s.Faults = []fault.Fault{fault.RedlockKill(2)}
	s.Strategies = []Strategy{Strategy(strategy.Redlock)}
	if _, err := Run(t.Context(), s, fleet.ExternalFleet([]string{srv.URL}, "tok", nil), Options{}); !errors.Is(err, fault.ErrNoControl) {
		t.Errorf("Run with a kill and no nodes: %v, want fault.ErrNoControl", err)
	}
}

// When the run's context ends in the middle of an attack, the attack
// stops sending, its faults are stopped all the same (they put the fleet
// back), and the context's error is returned with what was measured.
func TestRunStopsItsFaultsWhenTheContextEnds(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Strategies, s.Users, s.Rate, s.Duration = []Strategy{Strategy(strategy.Lua)}, 5000, 100, time.Minute
	p := &probe{row: strategy.Lua}
	s.Faults = []fault.Fault{p}
	ctx, cancel := context.WithCancel(t.Context())
	out, err := Run(ctx, s, fleet.ExternalFleet([]string{srv.URL}, "tok", nil), Options{Watch: func(sn Snapshot) {
		if sn.Sent >= 20 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	m := out.Strategies[0]
	if p.stops.Load() != 1 || m.Sent >= m.Planned || fault.Find[probed](m.Records) == 0 {
		t.Errorf("stopped %d times, sent %d of %d, record %v; want the fault stopped once with what was sent", p.stops.Load(), m.Sent, m.Planned, m.Records)
	}
	if p.settled.Load() != 0 {
		t.Error("a fault settled after an attack the context cut short: there was no audit")
	}
}

// A row is held to what it claims unless a fault of the run is expected
// to break it.
func TestUnsafeSparesWhatAFaultBreaks(t *testing.T) {
	o := &Outcome{Settings: DefaultSettings(), Strategies: []*StrategyResult{
		{Strategy: Strategy(strategy.Lua), Audit: tally.Audit{Oversold: 2, Sold: 12, InitialStock: 10}},
		{Strategy: Strategy(strategy.Fenced), Audit: tally.Audit{Oversold: 1, Sold: 11, InitialStock: 10}},
	}}
	o.Settings.Faults = []fault.Fault{&probe{row: strategy.Lua}}
	if bad := o.Unsafe(); len(bad) != 1 || !strings.HasPrefix(bad[0], "fenced: oversold 1") {
		t.Errorf("Unsafe = %q, want fenced alone (the probe breaks lua)", bad)
	}
}
