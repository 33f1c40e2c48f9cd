package fault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/strategy"
)

// A crash kills a shop at k/(Kills+1) of the attack, rotating over the
// shops, and starts it again: each kill's record names the process killed,
// what was in flight to it, and the new process that serves on its port.
func TestShopCrashKillsAndRestarts(t *testing.T) {
	testenv.SkipShort(t, "starts three shop processes and kills two; TestCrashMeasure checks what a kill counts")
	env := testenv.NewEnv(t, testenv.Embedded)
	fl, err := fleet.StartFleet(t.Context(), fleet.FleetConfig{
		Backends:  &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()},
		Processes: true, SQLitePath: env.DB.Path(), LogDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	before := fl.ShopPIDs()
	const expected = 900 * time.Millisecond
	stopped := make(chan struct{})
	a := &Attack{Strategy: strategy.SQLAtomic, Fleet: fl, Expected: expected, Stopped: stopped}
	sent := time.Now() // before the kills' clock starts: before the first kill however late this goroutine runs
	armed, err := (&ShopCrash{Kills: 2}).Arm(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	// One click to shop 1, sent before Arm and never answered: in flight
	// at its kill. The attack still runs: Stop waits for both kills.
	clicks := vegeta.Results{{URL: fl.Targets[0] + "/api/v1/orders", Timestamp: sent, Latency: time.Hour}}
	rec, err := armed.Stop(t.Context(), clicks)
	close(stopped)
	c, _ := rec.(*Crash)
	if err != nil || c == nil || len(c.Kills) != 2 || c.Planned != 2 || c.Err != "" {
		t.Fatalf("Stop = %+v, %v; want two kills without error", rec, err)
	}
	after := fl.ShopPIDs()
	for i, k := range c.Kills {
		if k.Shop != i || k.PID != before[i] || k.NewPID != after[i] || k.NewPID == k.PID || k.Back < k.At {
			t.Errorf("kill %d: %+v; want shop %d, pid %d killed, back as pid %d", i+1, k, i+1, before[i], after[i])
		}
		if due := expected * time.Duration(i+1) / 3; k.At < due {
			t.Errorf("kill %d at %v, before it was due at %v", i+1, k.At, due)
		}
		resp, err := http.Get(fl.Targets[i] + "/readyz")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("shop %d after its kill: %v, %v; want it serving", i+1, resp, err)
		} else {
			resp.Body.Close()
		}
	}
	if in, cut := []int{c.Kills[0].InFlight, c.Kills[1].InFlight}, []int{c.Kills[0].Cut, c.Kills[1].Cut}; !slices.Equal(in, []int{1, 0}) || !slices.Equal(cut, []int{1, 0}) {
		t.Errorf("in flight at the kills: %v, cut %v; want [1 0] for both (the one click to shop 1)", in, cut)
	}
	if after[2] != before[2] {
		t.Errorf("shop 3 is pid %d, was %d: two kills must not reach the third shop", after[2], before[2])
	}
}

// A crash whose context ends before its first kill kills nothing, and
// says so; one whose kill fails ends the attack with its error.
func TestShopCrashStopsCleanly(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	fl := &fleet.Fleet{Targets: []string{"http://127.0.0.1:1"}} // not a process fleet: a kill would fail
	armed, err := (&ShopCrash{Kills: 1}).Arm(ctx, &Attack{Fleet: fl, Expected: time.Hour, Stopped: make(chan struct{})})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	rec, err := armed.Stop(ctx, nil)
	if c, _ := rec.(*Crash); err != nil || c == nil || len(c.Kills) != 0 || !strings.Contains(c.Why(Sale{}), "no shop was killed") {
		t.Fatalf("Stop after the context ended = %+v, %v; want no kill", rec, err)
	}
	armed, _ = (&ShopCrash{Kills: 1}).Arm(t.Context(), &Attack{Fleet: fl, Stopped: make(chan struct{})})
	rec, err = armed.Stop(t.Context(), nil)
	if c, _ := rec.(*Crash); err == nil || c == nil || !strings.Contains(c.Err, "not processes") {
		t.Fatalf("Stop after a failed kill = %+v, %v; want the fleet's error", rec, err)
	}
}

// The crash's settings are checked, and it is ready on a process fleet
// alone.
func TestShopCrashChecks(t *testing.T) {
	for _, tc := range []struct {
		kills int
		p     Plan
		want  string
	}{
		{2, Plan{}, ""},
		{-1, Plan{}, "crash: -1, want 0..20 shop kills per attack"},
		{21, Plan{}, "crash: 21, want 0..20"},
		{1, Plan{Targets: true}, "crash: not with --targets"},
		{0, Plan{Targets: true}, ""},
	} {
		got := (&ShopCrash{Kills: tc.kills}).Check(tc.p)
		if (tc.want == "") != (len(got) == 0) || (tc.want != "" && !strings.HasPrefix(got[0], tc.want)) {
			t.Errorf("--crash %d in %+v: %q, want %q", tc.kills, tc.p, got, tc.want)
		}
	}
	if _, err := (&ShopCrash{Kills: 1}).Ready(&fleet.Fleet{}); !errors.Is(err, ErrNoControl) {
		t.Errorf("Ready on shops in process: %v, want ErrNoControl", err)
	}
}

// drifting is a shop whose audit reads Redis's stock less the
// database's: each of drifts in turn, then the last.
func drifting(t *testing.T, drifts ...int) *fleet.API {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := min(int(n.Add(1))-1, len(drifts)-1)
		w.Write([]byte(fmt.Sprintf(`{"initial_stock":10,"sold":10,"consistent":true,"drift":%d}`, drifts[i])))
	}))
	t.Cleanup(srv.Close)
	return fleet.NewAPI(srv.URL, "tok")
}

// After the audit, a crash waits for redis-decr's drift to read 0 and
// keeps the last audit it read; it counts the orders answered and those
// not written.
func TestShopCrashSettles(t *testing.T) {
	answered := vegeta.Results{{Code: 201, Body: []byte(`{"id":"a"}`)}, {Code: 202, Body: []byte(`{"id":"b"}`)}, {Code: 409}}
	c := &crashing{attack: &Attack{Shop: drifting(t, 1, 0), Product: "p"}, rec: &Crash{}, results: answered}
	au := tally.Audit{Drift: new(int)}
	*au.Drift = 2
	if err := c.Settle(t.Context(), &au, 1); err != nil {
		t.Fatal(err)
	}
	if au.Drift == nil || *au.Drift != 0 || c.rec.Drift == nil || *c.rec.Drift != 0 || c.rec.DriftWaited <= 0 {
		t.Errorf("after Settle: audit drift %v, record %+v; want both read back at 0, and how long that took", au.Drift, c.rec)
	}
	if c.rec.Answered != 2 || c.rec.WithoutOrder != 1 {
		t.Errorf("answered %d, without an order %d; want 2 and 1", c.rec.Answered, c.rec.WithoutOrder)
	}
	if why := c.rec.Why(Sale{}); !strings.Contains(why, "read back at the database's") || !strings.Contains(why, "1 of the 2 orders answered have no row") {
		t.Errorf("why = %q", why)
	}
	// Not redis-decr: nothing to wait for.
	plain := &crashing{attack: &Attack{Product: "p"}, rec: &Crash{}}
	if err := plain.Settle(t.Context(), &tally.Audit{}, 0); err != nil || plain.rec.Drift != nil || plain.rec.DriftWaited != 0 {
		t.Errorf("Settle without a drift: %v, %+v; want nothing waited", err, plain.rec)
	}
	// The context ends while the drift is still there: its error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	stuck := &crashing{attack: &Attack{Shop: drifting(t, 3), Product: "p"}, rec: &Crash{}}
	au = tally.Audit{Drift: new(int)}
	*au.Drift = 3
	if err := stuck.Settle(ctx, &au, 0); !errors.Is(err, fleet.ErrShop) || *au.Drift != 3 {
		t.Errorf("Settle on an ended context: %v, drift %d; want the shop unreached, the audit as it was", err, *au.Drift)
	}
}

// More kills than shops go round the shops: kill k strikes shop
// (k-1) mod shops. A kill due after the attack stopped is not made.
func TestShopCrashRotates(t *testing.T) {
	testenv.SkipShort(t, "starts two shop processes and kills them three times")
	env := testenv.NewEnv(t, testenv.Embedded)
	fl, err := fleet.StartFleet(t.Context(), fleet.FleetConfig{Shops: 2,
		Backends:  &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()},
		Processes: true, SQLitePath: env.DB.Path(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	stopped := make(chan struct{})
	armed, _ := (&ShopCrash{Kills: 3}).Arm(t.Context(), &Attack{Fleet: fl, Expected: 400 * time.Millisecond, Stopped: stopped})
	rec, err := armed.Stop(t.Context(), nil)
	close(stopped)
	c, _ := rec.(*Crash)
	if err != nil || c == nil || len(c.Kills) != 3 {
		t.Fatalf("Stop = %+v, %v; want three kills", rec, err)
	}
	if shops := []int{c.Kills[0].Shop, c.Kills[1].Shop, c.Kills[2].Shop}; !slices.Equal(shops, []int{0, 1, 0}) {
		t.Errorf("kills struck shops %v, want [0 1 0]", shops)
	}
	if c.Kills[2].PID != c.Kills[0].NewPID {
		t.Errorf("the third kill struck pid %d, want the process the first restart started (%d)", c.Kills[2].PID, c.Kills[0].NewPID)
	}
	late := make(chan struct{})
	armed, _ = (&ShopCrash{Kills: 1}).Arm(t.Context(), &Attack{Fleet: fl, Expected: time.Hour, Stopped: late})
	close(late)
	if rec, err := armed.Stop(t.Context(), nil); err != nil || len(rec.(*Crash).Kills) != 0 {
		t.Errorf("a kill due after the attack stopped: %+v, %v; want none made", rec, err)
	}
}
