package fault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/strategy"
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
	if len(d) != 8 || d[0] != (Default{"lock-ttl", "12s"}) || d[7].Flag != "strategies" {
		t.Errorf("Defaults = %v, want the lease, the work and the rest of the sale, then the rows", d)
	}
	// The lease outlasts the promotion and the holder writes before its
	// first renewal (failover.go).
	if FailoverWork >= FailoverLockTTL/3 {
		t.Errorf("FailoverWork %v, FailoverLockTTL %v: the holder's first renewal must come after its write", FailoverWork, FailoverLockTTL)
	}
}

// On real redis-server and redis-sentinel processes, one set for every
// case, each kill at Sentinel's own pace after the last (paced):
//
//   - a row whose lock is elsewhere: the round kills the master after its
//     moment, the Sentinels promote the replica and the old master
//     rejoins; the record says how far behind the replica was and how
//     long the promotion took;
//   - a lua row: the link is held at the master's grant of the lock, the
//     master killed, and a second token the promoted replica grants while
//     the holder works is counted;
//   - a redis-decr row: the master is killed once the database sold a
//     unit the held replica still offers, the promoted counter's phantom
//     unit is counted, and the drift watched until it reads 0;
//   - a round that waits for a grant that never comes ends with the
//     context, the link let go and the set untouched.
func TestSentinelFailoverOnRealProcesses(t *testing.T) {
	testenv.SkipShort(t, "starts redis-server and redis-sentinel processes; TestFailoverWhy checks the clause")
	set := testenv.NewSentinels(t).Set()
	fl := &fleet.Fleet{Sentinels: set}
	var last time.Time // the last kill
	paced := func() {
		for time.Since(last) < redisproc.KillEvery {
			time.Sleep(50 * time.Millisecond) // Sentinel's own pace between two failovers
		}
	}
	run := func(t *testing.T, a *Attack, during func()) *Failover {
		t.Helper()
		paced()
		stopped := make(chan struct{})
		a.Fleet, a.Stopped = fl, stopped
		armed, err := (&SentinelFailover{Enabled: true, Rounds: 1}).Arm(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		if during != nil {
			during()
		}
		close(stopped)
		rec, err := armed.Stop(t.Context(), nil)
		f, _ := rec.(*Failover)
		if err != nil || f == nil || len(f.Rounds) != 1 || f.Err != "" {
			t.Fatalf("Stop = %+v, %v; want one round without error", rec, err)
		}
		last = f.Rounds[0].killed
		return f
	}
	t.Run("counts a second grant", func(t *testing.T) {
		key := order.ProductKey("lua-row")
		replica := set.Replica()
		// The holder works 6 s: the promotion (two to three seconds after
		// the kill) and the second grant come well within it.
		r := run(t, &Attack{Strategy: strategy.Lua, Product: "lua-row", Work: 6 * time.Second}, func() {
			// The holder's grant, as lua's SET NX PX sends it: held from the replica.
			if err := set.Master().Client.SetNX(t.Context(), key, "holder", 12*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
			if err := set.AwaitMaster(t.Context(), replica.Addr); err != nil {
				t.Fatal(err)
			}
			// The promoted replica never heard of it, and grants it again.
			if err := replica.Client.SetNX(t.Context(), key, "second", 12*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
		}).Rounds[0]
		if !r.Caught || r.GrantedTwice != 1 || r.Behind <= 0 {
			t.Errorf("round %+v: want the holder caught, the replica behind, one second grant", r)
		}
	})
	t.Run("redis-decr's phantom unit", func(t *testing.T) {
		// The database has sold a unit of the five the replica's counter
		// offers (its audit says 4 left); the shops' sweep lowers the
		// promoted counter to 4 after the promotion.
		stock := redisstock.StockKey("decr-row")
		if err := set.Master().Client.Set(t.Context(), stock, 5, 0).Err(); err != nil {
			t.Fatal(err)
		}
		replica := set.Replica()
		f := run(t, &Attack{Strategy: strategy.RedisDecr, Product: "decr-row", Shop: audited(t, 4)}, func() {
			if err := set.AwaitMaster(t.Context(), replica.Addr); err != nil {
				t.Fatal(err)
			}
			if err := replica.Client.Set(t.Context(), stock, 4, 0).Err(); err != nil {
				t.Fatal(err)
			}
		})
		r, d := f.Rounds[0], f.Drift
		if !r.Caught || r.Phantom != 1 || d == nil || d.Peak != 1 || d.End != 0 || d.Repaired < 0 {
			t.Errorf("round %+v, drift %+v: want one phantom unit, the drift at +1 then repaired to 0", r, d)
		}
	})
	t.Run("redis-decr with nothing to offer", func(t *testing.T) {
		// The replica's counter offers no unit: no sale to wait for, a
		// moment, and nothing caught.
		if err := set.Master().Client.Set(t.Context(), redisstock.StockKey("empty-row"), 0, 0).Err(); err != nil {
			t.Fatal(err)
		}
		replica := set.Replica()
		r := run(t, &Attack{Strategy: strategy.RedisDecr, Product: "empty-row", Shop: audited(t, 0)}, func() {
			if err := set.AwaitMaster(t.Context(), replica.Addr); err != nil {
				t.Fatal(err)
			}
		}).Rounds[0]
		if r.Caught || r.Held < failoverMoment || r.Phantom != 0 {
			t.Errorf("round %+v: want nothing caught, the link held a moment, no phantom unit", r)
		}
	})
	t.Run("two rounds at Sentinel's pace", func(t *testing.T) {
		// Rows whose lock is elsewhere: each round fires (the link held a
		// moment, the then replica promoted, nothing caught or counted),
		// so the master is again the one before the first.
		paced()
		master := set.Master().Addr
		stopped := make(chan struct{})
		armed, err := (&SentinelFailover{Enabled: true, Rounds: 2}).Arm(t.Context(), &Attack{Strategy: strategy.Etcd, Product: "p", Fleet: fl, Stopped: stopped})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := armed.Stop(t.Context(), nil) // rounds that need no buyer run to their end
		close(stopped)
		f, _ := rec.(*Failover)
		if err != nil || f == nil || len(f.Rounds) != 2 || f.Err != "" {
			t.Fatalf("Stop = %+v, %v; want two rounds", rec, err)
		}
		for i, r := range f.Rounds {
			if r.Held < failoverMoment || r.Promoted <= 0 || r.Caught || r.GrantedTwice != -1 || r.Phantom != -1 || r.Behind < 0 {
				t.Errorf("round %d %+v: want the link held a moment, a promotion, nothing caught or counted", i, r)
			}
		}
		if got := set.Master().Addr; got != master {
			t.Errorf("master %s after two rounds, want %s, promoted back by the second", got, master)
		}
		if gap := f.Rounds[1].At - f.Rounds[0].At; gap < redisproc.KillEvery {
			t.Errorf("kills %v apart, want at least %v", gap, redisproc.KillEvery)
		}
		last = f.Rounds[1].killed
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

// audited is a shop whose audit of any product reads left units in the
// database, with Redis's stock known.
func audited(t *testing.T, left int) *fleet.API {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"initial_stock":5,"stock":%d,"sold":%d,"consistent":true,"redis_stock":0}`, left, 5-left)
	}))
	t.Cleanup(srv.Close)
	return fleet.NewAPI(srv.URL, "tok")
}
