package fault

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/testenv"
)

// The failover's settings are checked: it kills only a master it started,
// and a sweep measures no crash.
func TestSentinelFailoverChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    SentinelFailover
		p    Plan
		want string
	}{
		{"on", SentinelFailover{Enabled: true, Rounds: 3}, Plan{}, ""},
		{"off", SentinelFailover{Rounds: DefaultFailovers}, Plan{Targets: true}, ""},
		{"too many", SentinelFailover{Enabled: true, Rounds: 11}, Plan{}, "failovers: 11, want 0..10"},
		{"rounds without a failover", SentinelFailover{Rounds: 2}, Plan{}, "failovers: only with --failover"},
		{"another deployment's Sentinels", SentinelFailover{Enabled: true, Rounds: 3}, Plan{Targets: true, Sentinels: true}, "failover: not with --redis-sentinel"},
		{"a fleet of someone else's", SentinelFailover{Enabled: true, Rounds: 3}, Plan{Targets: true}, "failover: --redis-sentinel is missing"},
		{"Sentinels for nothing", SentinelFailover{Rounds: 3}, Plan{Sentinels: true}, "redis-sentinel: only with --failover"},
		{"a sweep", SentinelFailover{Enabled: true, Rounds: 3}, Plan{Sweep: true}, "sweep: not with --failover"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.f.Check(tc.p)
			if (tc.want == "") != (len(got) == 0) || (tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want))) {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := (&SentinelFailover{Enabled: true}).Ready(&fleet.Fleet{}); !errors.Is(err, ErrNoControl) {
		t.Errorf("Ready without a Sentinel set: %v, want ErrNoControl", err)
	}
	d := (&SentinelFailover{}).Defaults()
	if len(d) != 8 || d[0] != (Default{"lock-ttl", "12s"}) || d[7].Flag != "modes" {
		t.Errorf("Defaults = %v, want the lease, the work and the rest of the sale, then the rows", d)
	}
	// The lease outlasts the promotion and the holder writes before its
	// first renewal (failover.go).
	if FailoverWork >= FailoverLockTTL/3 {
		t.Errorf("FailoverWork %v, FailoverLockTTL %v: the holder's first renewal must come after its write", FailoverWork, FailoverLockTTL)
	}
}

// On real redis-server and redis-sentinel processes: a round kills the
// master after its moment, the Sentinels promote the replica and the old
// master rejoins, and the record says how far behind the replica was and
// how long the promotion took; a round that waits for a grant that never
// comes ends with the context, the link let go and the set untouched.
func TestSentinelFailoverOnRealProcesses(t *testing.T) {
	testenv.SkipShort(t, "starts redis-server and redis-sentinel processes; TestFailoverWhy checks the clause")
	set := testenv.NewSentinels(t).Set()
	fl := &fleet.Fleet{Sentinels: set}
	t.Run("fires", func(t *testing.T) {
		replica := set.Replica().Addr
		stopped := make(chan struct{})
		armed, err := (&SentinelFailover{Enabled: true, Rounds: 1}).Arm(t.Context(), &Attack{Strategy: strategy.SQLAtomic, Product: "p", Fleet: fl, Stopped: stopped})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := armed.Stop(t.Context(), nil) // a round that needs no buyer runs to its end
		close(stopped)
		f, _ := rec.(*Failover)
		if err != nil || f == nil || len(f.Rounds) != 1 || f.Err != "" {
			t.Fatalf("Stop = %+v, %v; want one round without error", rec, err)
		}
		r := f.Rounds[0]
		if r.Held < failoverMoment || r.Promoted <= 0 || r.Caught || r.GrantedTwice != -1 || r.Phantom != -1 || r.Behind < 0 {
			t.Errorf("round %+v: want the link held a moment, a promotion, nothing caught or counted", r)
		}
		if got := set.Master().Addr; got != replica {
			t.Errorf("master %s after the round, want the promoted replica %s", got, replica)
		}
	})
	t.Run("stops with the context", func(t *testing.T) {
		master := set.Master().Addr
		ctx, cancel := context.WithCancel(t.Context())
		stopped := make(chan struct{})
		armed, err := (&SentinelFailover{Enabled: true, Rounds: 2}).Arm(ctx, &Attack{Strategy: strategy.Lua, Product: "nobody-buys", Fleet: fl, Stopped: stopped})
		if err != nil {
			t.Fatal(err)
		}
		cancel() // no grant came
		rec, err := armed.Stop(ctx, nil)
		close(stopped)
		if f, _ := rec.(*Failover); err != nil || f == nil || len(f.Rounds) != 0 {
			t.Fatalf("Stop = %+v, %v; want no round", rec, err)
		}
		if set.Link().Held() || set.Master().Addr != master {
			t.Errorf("after the stop: link held %v, master %s (was %s); want the set as it was", set.Link().Held(), set.Master().Addr, master)
		}
	})
}
