package fault

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// killRow is a redlock row's kill at 1s, and its sale, whose answers after
// the kill are codes.
func killRow(after ...uint16) (*Kill, Sale) {
	t0 := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	k := &Kill{Nodes: []int{0, 1, 2}, Noun: "Redis nodes", Of: 5, At: time.Second}
	m := Sale{Strategy: strategy.Redlock, Audit: tally.Audit{InitialStock: 100, Sold: 100, Consistent: true}}
	m.Results = append(m.Results, vegeta.Result{Timestamp: t0, Code: 201})
	for i, code := range after {
		r := vegeta.Result{Timestamp: t0.Add(time.Second + time.Duration(i+1)*time.Millisecond), Code: code}
		switch code {
		case 409:
			r.Body = []byte(`{"error":{"code":"sold_out"}}`)
		case 503:
			r.Body = []byte(`{"error":{"code":"unavailable"}}`)
		}
		m.Results = append(m.Results, r)
	}
	return k, m
}

func why(k *Kill, s Sale) string { return k.Why(s) }

func TestWhyKillCountsWhatCameAfter(t *testing.T) {
	soldOut := why(killRow(409, 409, 409))
	if strings.Contains(soldOut, "refused instead") || !strings.Contains(soldOut, "sold out before the kill") {
		t.Errorf("kill after the sell-out: %q, want it to say the product had sold out, not that orders were refused", soldOut)
	}
	refused := why(killRow(503, 503, 409))
	if !strings.Contains(refused, "of the 3 requests sent after it, 2 were refused (503), 0 made an order, 1 were told sold out") {
		t.Errorf("kill with 503s after: %q, want the counts", refused)
	}
	if !strings.Contains(refused, "only 2 of 5 left: no majority") {
		t.Errorf("kill of 3 of 5: %q, want no majority", refused)
	}
}

// A kill measured in the attack counts from its own clock time, not from
// the first click plus At (At counts from Arm, before the first click): a
// click sent between the two is after the kill.
func TestWhyKillCountsFromTheKillsClock(t *testing.T) {
	k, s := killRow(503, 503)
	k.when = s.Results[0].Timestamp.Add(time.Second / 2) // At says 1s; the kill was at 0.5s
	s.Results = append(s.Results, vegeta.Result{Timestamp: s.Results[0].Timestamp.Add(600 * time.Millisecond), Code: 503,
		Body: []byte(`{"error":{"code":"unavailable"}}`)})
	if got := why(k, s); !strings.Contains(got, "of the 3 requests sent after it, 3 were refused (503)") {
		t.Errorf("kill at 0.5s by its clock, At 1s: %q, want the click at 0.6s counted after it", got)
	}
}

// downNodes is a fleet.NodeKiller that records what it was asked to take
// down and whether it was brought back.
type downNodes struct {
	mu       sync.Mutex
	down     []int
	restored bool
}

func (d *downNodes) Kill(_ context.Context, nodes []int, _ time.Duration) (func(context.Context) error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down = nodes
	return func(context.Context) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.restored = true
		return nil
	}, nil
}

func (d *downNodes) Describe() string { return "recorded" }

// The kill fires halfway through the expected attack, takes the first
// nodes down, and brings them back at Stop; an attack it does not act on
// (another strategy, or one stopped before halfway) takes nothing down.
func TestNodeKill(t *testing.T) {
	for _, tc := range []struct {
		name      string
		st        strategy.Name
		stopEarly bool
		want      []int
	}{
		{"redlock, three of five", strategy.Redlock, false, []int{0, 1, 2}},
		{"stopped before halfway", strategy.Redlock, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := &downNodes{}
			stopped := make(chan struct{})
			a := &Attack{Strategy: tc.st, Fleet: &fleet.Fleet{Nodes: nodes}, Expected: 40 * time.Millisecond, Stopped: stopped}
			if tc.stopEarly {
				a.Expected = time.Hour
			}
			armed, err := RedlockKill(3).Arm(t.Context(), a)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.stopEarly && tc.want != nil {
				for nodes.took() == nil { // the killer's own rule: halfway
					runtime.Gosched()
				}
			}
			close(stopped)
			rec, err := armed.Stop(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if rec != nil || nodes.took() != nil {
					t.Fatalf("record %+v, nodes down %v; want none", rec, nodes.took())
				}
				return
			}
			if got, _ := rec.(*Kill); got == nil || !slices.Equal(got.Nodes, tc.want) || got.Err != "" || got.At < a.Expected/2 {
				t.Fatalf("record %+v, want nodes %v down at %v or later", got, tc.want, a.Expected/2)
			}
			if !nodes.back() {
				t.Error("Stop did not bring the nodes back")
			}
		})
	}
}

// A kill armed on a context that ends before halfway takes nothing down.
func TestNodeKillStopsWithTheContext(t *testing.T) {
	nodes := &downNodes{}
	ctx, cancel := context.WithCancel(t.Context())
	armed, err := EtcdKill(2).Arm(ctx, &Attack{Strategy: strategy.Etcd, Fleet: &fleet.Fleet{EtcdMembers: nodes}, Expected: time.Hour, Stopped: make(chan struct{})})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if rec, err := armed.Stop(ctx, nil); err != nil || rec != nil || nodes.took() != nil {
		t.Fatalf("Stop = %v, record %+v, down %v; want nothing", err, rec, nodes.took())
	}
}

func (d *downNodes) took() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.down
}

func (d *downNodes) back() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.restored
}

// Each kill's count is checked against its service's size, the rows of
// the run and the backends the command line names.
func TestNodeKillChecks(t *testing.T) {
	both := []strategy.Name{strategy.Redlock, strategy.Etcd}
	for _, tc := range []struct {
		name string
		k    *NodeKill
		p    Plan
		want string
	}{
		{"redlock, two of five", RedlockKill(2), Plan{Rows: both}, ""},
		{"six of five", RedlockKill(6), Plan{Rows: both}, "redlock-kill: 6, want 0..5 of the 5 Redis nodes"},
		{"negative", EtcdKill(-1), Plan{Rows: both}, "etcd-kill: -1, want 0..3 of the 3 etcd members"},
		{"no redlock row", RedlockKill(2), Plan{Rows: []strategy.Name{strategy.Lua}}, "redlock-kill: needs redlock in --strategies"},
		{"no etcd row", EtcdKill(1), Plan{Rows: []strategy.Name{strategy.Lua}}, "etcd-kill: needs etcd in --strategies"},
		{"a fleet's nodes unnamed", RedlockKill(2), Plan{Rows: both, Targets: true}, "redlock-kill: 2 nodes to stop, but --redis names 0"},
		{"too few nodes named", RedlockKill(3), Plan{Rows: both, Redis: 2}, "redlock-kill: 3 nodes to stop, but --redis names 2"},
		{"the fleet's five nodes", RedlockKill(3), Plan{Rows: both, Targets: true, Redis: 5}, ""},
		{"an etcd cluster of someone else's", EtcdKill(1), Plan{Rows: both, Etcd: true}, "etcd-kill: only with the embedded etcd cluster"},
		{"off, anywhere", EtcdKill(0), Plan{Targets: true, Etcd: true}, ""},
		{"zookeeper, two of three", ZooKeeperKill(2), Plan{Rows: []strategy.Name{strategy.ZooKeeper}}, ""},
		{"no zookeeper row", ZooKeeperKill(1), Plan{Rows: both}, "zookeeper-kill: needs zookeeper in --strategies"},
		{"an ensemble of someone else's", ZooKeeperKill(1), Plan{Rows: []strategy.Name{strategy.ZooKeeper}, ZooKeeper: true}, "zookeeper-kill: only with the ensemble the load generator starts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.k.Check(tc.p)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("Check = %q, want nothing", got)
			case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
}

// A kill is ready where the fleet can take its nodes down, and says how.
func TestNodeKillReady(t *testing.T) {
	if _, err := RedlockKill(2).Ready(&fleet.Fleet{}); !errors.Is(err, ErrNoControl) {
		t.Errorf("Ready on a fleet without node control: %v, want ErrNoControl", err)
	}
	if _, err := EtcdKill(1).Ready(&fleet.Fleet{Nodes: &downNodes{}}); !errors.Is(err, ErrNoControl) {
		t.Errorf("etcd kill on a fleet with Redis control alone: %v, want ErrNoControl", err)
	}
	if how, err := EtcdKill(1).Ready(&fleet.Fleet{EtcdMembers: &downNodes{}}); err != nil || how != "recorded" {
		t.Errorf("Ready = %q, %v; want the killer's description", how, err)
	}
	if RedlockKill(1).Strikes(strategy.Etcd) || !RedlockKill(1).Strikes(strategy.Redlock) || !EtcdKill(1).Strikes(strategy.Etcd) {
		t.Error("a kill strikes another row than the one that locks on its nodes")
	}
}

// The clause counts the nodes left against a majority, in the service's
// own words, and says when nothing came after the kill.
func TestKillWhy(t *testing.T) {
	k, s := killRow(201, 503)
	k.Nodes = []int{0, 1}
	for _, want := range []string{"nodes 1,2 of 5 went down at 1s", "3 of 5 still a majority", "of the 2 requests sent after it, 1 were refused (503), 1 made an order"} {
		if got := k.Why(s); !strings.Contains(got, want) {
			t.Errorf("why = %q, want %q", got, want)
		}
	}
	members := &Kill{Nodes: []int{0}, Noun: "etcd members", Of: 3, At: 2 * time.Second, Err: "restart member 1: boom"}
	got := members.Why(s)
	for _, want := range []string{"members 1 of 3 went down at 2s", "2 of 3 still a majority", "no request was sent after it", "(restart member 1: boom)"} {
		if !strings.Contains(got, want) {
			t.Errorf("why = %q, want %q", got, want)
		}
	}
	if got := members.Why(Sale{}); strings.Contains(got, "request") {
		t.Errorf("why with no answers = %q, want nothing said of requests", got)
	}
}

// failingNodes is a NodeKiller whose kill and restore fail.
type failingNodes struct{ killErr, restoreErr error }

func (f failingNodes) Kill(context.Context, []int, time.Duration) (func(context.Context) error, error) {
	if f.killErr != nil {
		return nil, f.killErr
	}
	return func(context.Context) error { return f.restoreErr }, nil
}

func (failingNodes) Describe() string { return "failing" }

// Nodes that would not go down, or would not come back, are in the
// record, not an error: the attack goes on and the row says so.
func TestNodeKillRecordsFailures(t *testing.T) {
	for _, tc := range []struct {
		nodes failingNodes
		want  string
	}{
		{failingNodes{killErr: errors.New("node 1 refused")}, "node 1 refused"},
		{failingNodes{restoreErr: errors.New("node 2 not back")}, "node 2 not back"},
	} {
		stopped := make(chan struct{})
		armed, _ := RedlockKill(2).Arm(t.Context(), &Attack{Strategy: strategy.Redlock, Fleet: &fleet.Fleet{Nodes: tc.nodes}, Stopped: stopped})
		rec, err := armed.Stop(t.Context(), nil) // Expected 0: the kill is due at once
		close(stopped)
		if k, _ := rec.(*Kill); err != nil || k == nil || k.Err != tc.want {
			t.Errorf("Stop = %+v, %v; want the record with %q", rec, err, tc.want)
		}
	}
}
