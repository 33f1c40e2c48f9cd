package fault

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/fleet"
	"github.com/flashsale/flashsale/internal/ledger"
	"github.com/flashsale/flashsale/internal/strategy"
)

// killRow is a redlock row's kill at 1s, and its sale, whose answers after
// the kill are codes.
func killRow(after ...uint16) (*Kill, Sale) {
	t0 := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	k := &Kill{Nodes: []int{0, 1, 2}, Noun: "Redis nodes", Of: 5, At: time.Second}
	m := Sale{Strategy: strategy.Redlock, Audit: ledger.Audit{InitialStock: 100, Sold: 100, Consistent: true}}
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
