package fault

import (
	"flag"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Every kind registered itself, off, under a name of its own, and its
// name is the flag that switches it on: what messages, the report and
// the one-fault-per-row rule name it by.
func TestNameSwitchesEveryFaultOn(t *testing.T) {
	want := []string{"crash", "failover", "cluster-failover", "redlock-kill", "etcd-kill", "zookeeper-kill", "redis-restart"}
	var names []string
	for _, f := range Kinds() {
		name := Name(f)
		names = append(names, name)
		if f.On() {
			t.Errorf("%s: on before any flag was given", name)
		}
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		f.Flags(fs)
		value := "1"
		if isBool(fs.Lookup(name)) {
			value = "true"
		}
		if err := fs.Set(name, value); err != nil || !f.On() {
			t.Errorf("--%s %s: %v, on %v; want the fault on", name, value, err, f.On())
		}
		if bad := f.Check(Plan{}); len(bad) > 0 {
			t.Errorf("--%s %s alone, in no particular run: %q", name, value, bad)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("kinds %v, want %v (one per file, in the files' order)", names, want)
	}
	if a, b := Kinds(), Kinds(); a[0] == b[0] {
		t.Error("Kinds returned the same value twice: a command line's flags would write into another's")
	}
}

// A fault's flags, as a command line repeats them and report.json
// records them.
func TestArgsAndValues(t *testing.T) {
	for _, tc := range []struct {
		f    Fault
		args string
	}{
		{&EmptyRestart{Nodes: 3, Delay: time.Second}, "--redis-restart 3 --restart-delay 1s"},
		{&EmptyRestart{Nodes: 3}, "--redis-restart 3"},
		{&SentinelFailover{Enabled: true, Rounds: 2}, "--failover --failovers 2"},
		{&ClusterFailover{Enabled: true, Rounds: 2}, "--cluster-failover --cluster-failovers 2"},
		{RedlockKill(2), "--redlock-kill 2"},
		{EtcdKill(1), "--etcd-kill 1"},
		{&ShopCrash{Kills: 4}, "--crash 4"},
	} {
		if got := strings.Join(Args(tc.f), " "); got != tc.args {
			t.Errorf("Args = %q, want %q", got, tc.args)
		}
	}
	v := Values(&EmptyRestart{Nodes: 3})
	if len(v) != 2 || v["redis-restart"] != "3" || v["restart-delay"] != "0s" {
		t.Errorf("Values = %v, want every flag with its value", v)
	}
}

// Two faults that strike one row of the run are refused; two that strike
// different rows, or a row the run does not have, are not.
func TestProblemsOneFaultPerRow(t *testing.T) {
	restart, crash, failover := &EmptyRestart{Nodes: 3}, &ShopCrash{Kills: 1}, &SentinelFailover{Enabled: true, Rounds: 1}
	for _, tc := range []struct {
		name   string
		faults []Fault
		rows   []strategy.Name
		want   string
	}{
		{"a kill of each lock service", []Fault{RedlockKill(2), EtcdKill(1)}, []strategy.Name{strategy.Redlock, strategy.Etcd}, ""},
		{"a restart and a kill of one redlock", []Fault{RedlockKill(2), restart}, []strategy.Name{strategy.Lua, strategy.Redlock},
			"redlock-kill: not with --redis-restart: both strike the redlock row"},
		{"a crash strikes every row", []Fault{crash, EtcdKill(1)}, []strategy.Name{strategy.Etcd}, "crash: not with --etcd-kill: both strike the etcd row"},
		{"a failover and a restart, the first row both strike", []Fault{failover, restart}, []strategy.Name{strategy.Lua, strategy.Fenced, strategy.Redlock},
			"failover: not with --redis-restart: both strike the fenced row"},
		{"a crash and a restart the rows do not need", []Fault{crash, restart}, []strategy.Name{strategy.SQLAtomic}, "redis-restart: needs redlock or fenced in --strategies"},
		{"one off", []Fault{crash, &EmptyRestart{}}, []strategy.Name{strategy.Redlock}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Problems(tc.faults, Plan{Rows: tc.rows})
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("Problems = %q, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
				t.Errorf("Problems = %q, want [%q]", got, tc.want)
			}
		})
	}
}

// Only the faults that are on set the run's defaults, break rows, or ask
// the fleet for what they need.
func TestWhatFaultsAskOfTheRun(t *testing.T) {
	on := []Fault{&ShopCrash{Kills: 1}, &EmptyRestart{}, &SentinelFailover{Rounds: 3}}
	d := Defaults(on)
	if len(d) != 2 || d[0] != (Default{"strategies", crashModes}) || d[1] != (Default{"stock", "600"}) {
		t.Errorf("Defaults = %v, want the crash's alone: the restart and the failover are off", d)
	}
	var cfg fleet.FleetConfig
	Provision(on, &cfg)
	if !cfg.Processes || cfg.RedisRestart || cfg.StartSentinels {
		t.Errorf("Provision: %+v, want child shops alone", cfg)
	}
	Provision([]Fault{&EmptyRestart{Nodes: 1}, &SentinelFailover{Enabled: true}}, &cfg)
	if !cfg.RedisRestart || !cfg.StartSentinels {
		t.Errorf("Provision: %+v, want proxies and a Sentinel set", cfg)
	}
	ttl := 100 * time.Millisecond
	for _, tc := range []struct {
		faults []Fault
		st     strategy.Name
		want   bool
	}{
		{[]Fault{&EmptyRestart{Nodes: 3}}, strategy.Redlock, true},
		{[]Fault{&EmptyRestart{Nodes: 3, Delay: ttl}}, strategy.Redlock, false}, // the delayed restart
		{[]Fault{&EmptyRestart{Nodes: 2}}, strategy.Redlock, false},             // a minority
		{[]Fault{&EmptyRestart{Nodes: 5}}, strategy.Fenced, false},
		{[]Fault{&SentinelFailover{Enabled: true}}, strategy.Lua, true},
		{[]Fault{&SentinelFailover{}}, strategy.Lua, false}, // off
		{[]Fault{&SentinelFailover{Enabled: true}}, strategy.RedisDecr, false},
		{[]Fault{&ShopCrash{Kills: 2}, RedlockKill(3)}, strategy.Redlock, false},
	} {
		if got := Breaks(tc.faults, tc.st, ttl); got != tc.want {
			t.Errorf("Breaks(%s, %s) = %v, want %v", Args(tc.faults[0]), tc.st, got, tc.want)
		}
	}
}

// The record of each type is found among an attack's records, nil where
// no fault left one.
func TestFind(t *testing.T) {
	k, c := &Kill{At: time.Second}, &Crash{Planned: 2}
	rs := Records{k, c}
	if Find[*Kill](rs) != k || Find[*Crash](rs) != c || Find[*Restart](rs) != nil || Find[*Failover](nil) != nil {
		t.Errorf("Find picked the wrong records out of %v", rs)
	}
	if got := rs.Clauses(Sale{}); len(got) != 2 || got[0] != k.Why(Sale{}) || got[1] != c.Why(Sale{}) {
		t.Errorf("Clauses = %q, want the kill's then the crash's", got)
	}
}

// A fault's flags as Args writes them, given to a fresh fault of its kind,
// make the same fault: the report's settings line repeats the run.
func TestArgsRepeatTheRun(t *testing.T) {
	for _, f := range []Fault{RedlockKill(3), EtcdKill(2), &EmptyRestart{Nodes: 3, Delay: 1500 * time.Millisecond},
		&SentinelFailover{Enabled: true, Rounds: 5}, &ShopCrash{Kills: 4}} {
		var fresh Fault
		for _, k := range Kinds() {
			if Name(k) == Name(f) {
				fresh = k
			}
		}
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		fresh.Flags(fs)
		if err := fs.Parse(Args(f)); err != nil {
			t.Fatalf("%v: %v", Args(f), err)
		}
		if got, want := Values(fresh), Values(f); !reflect.DeepEqual(got, want) {
			t.Errorf("%v parsed: %v, want %v", Args(f), got, want)
		}
	}
}
