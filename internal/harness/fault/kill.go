package fault

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

func init() { register(func() Fault { return RedlockKill(0) }) }

// NodeKill takes N of the nodes of a lock service down halfway through
// the attack of the one row that locks on them, and brings them back once
// the attack is over: --redlock-kill takes the first of the five Redis
// nodes in the redlock attack (below), --etcd-kill the first of the three
// etcd members in the etcd attack (kill_etcd.go). The first Redis node is
// the one lua, naive and the dedupe lock depend on; Redlock must not care
// which nodes go, only how many, and etcd which members, only how many.
type NodeKill struct {
	// N is how many nodes go down: the flag's value.
	N int
	nodeKind
}

// nodeKind is what tells one node kill from another: its flag, the row it
// strikes, the nodes and who takes them down, and what the command line
// must name for it (check).
type nodeKind struct {
	flag, usage string
	row         strategy.Name
	noun        string // "Redis nodes", "etcd members"
	total       int
	killer      func(*fleet.Fleet) fleet.NodeKiller
	check       func(n int, p Plan) []string
}

// RedlockKill is --redlock-kill n: n of the five Redis nodes down halfway
// through the redlock attack.
func RedlockKill(n int) *NodeKill {
	return &NodeKill{N: n, nodeKind: nodeKind{
		flag: "redlock-kill", row: strategy.Redlock, noun: "Redis nodes", total: fleet.RedisNodes,
		usage:  "stop N of the 5 Redis nodes halfway through the redlock attack, and bring them back after it (default 0: none)",
		killer: func(f *fleet.Fleet) fleet.NodeKiller { return f.Nodes },
		check: func(n int, p Plan) []string {
			if n > 0 && (p.Targets || p.Redis > 0) && p.Redis < n {
				return []string{fmt.Sprintf("redlock-kill: %d nodes to stop, but --redis names %d; with --targets, give the fleet's five Redis nodes in --redis", n, p.Redis)}
			}
			return nil
		},
	}}
}

// Flags registers the kill's flag.
func (k *NodeKill) Flags(fs *flag.FlagSet) { fs.IntVar(&k.N, k.flag, k.N, k.usage) }

// On reports whether nodes go down.
func (k *NodeKill) On() bool { return k.N != 0 }

// Strikes reports whether st is the row that locks on the nodes.
func (k *NodeKill) Strikes(st strategy.Name) bool { return st == k.row }

// Check says what is wrong with the kill's count in a run of p.
func (k *NodeKill) Check(p Plan) []string {
	if k.N < 0 || k.N > k.total {
		return []string{fmt.Sprintf("%s: %d, want 0..%d of the %d %s", k.flag, k.N, k.total, k.total, k.noun)}
	}
	return append(needsRow(k, p, string(k.row)), k.check(k.N, p)...)
}

// Ready says how fl's nodes go down.
func (k *NodeKill) Ready(fl *fleet.Fleet) (string, error) {
	killer := k.killer(fl)
	if killer == nil {
		return "", fmt.Errorf("%w: --%s: the fleet cannot take its %s down", ErrNoControl, k.flag, k.noun)
	}
	return killer.Describe(), nil
}

// Kill records one --redlock-kill or --etcd-kill: which nodes (0-based)
// went down when, and whether they came back.
type Kill struct {
	// Nodes went down, of Of Redis nodes or etcd members (Noun).
	Nodes []int
	Noun  string
	Of    int
	// At is when the nodes went down, since the attack began.
	At time.Duration
	// Err is why the nodes could not be taken down or brought back ("" if
	// all went well).
	Err string
	// when is the clock's time of the kill, which the clicks' timestamps
	// are compared with (At counts from Arm, a little before the first
	// click); zero in a record read back from JSON.
	when time.Time
}

// nodesDown is a node kill armed in one attack.
type nodesDown struct{ out chan killed }

// killed is what the killer goroutine did: the record for the report, and
// how to bring the nodes back (nil if it took nothing down).
type killed struct {
	kill    *Kill
	restore func(context.Context) error
}

// Arm starts the killer for a: it takes the nodes down at half a.Expected,
// unless a.Stopped closes or ctx ends first.
func (k *NodeKill) Arm(ctx context.Context, a *Attack) (Armed, error) {
	d := &nodesDown{out: make(chan killed, 1)}
	killer := k.killer(a.Fleet)
	began := time.Now()
	half := a.Expected / 2
	go func() {
		if !waitUntil(ctx, a.Stopped, began.Add(half)) {
			d.out <- killed{}
			return
		}
		nodes := make([]int, k.N)
		for i := range nodes {
			nodes[i] = i
		}
		now := time.Now()
		rec := &Kill{Nodes: nodes, Noun: k.noun, Of: k.total, At: now.Sub(began), when: now}
		// Down for the rest of the attack, plus a little for the stragglers.
		restore, err := killer.Kill(ctx, nodes, a.Expected-half+250*time.Millisecond)
		if err != nil {
			rec.Err = err.Error()
		}
		d.out <- killed{kill: rec, restore: restore}
	}()
	return d, nil
}

// Stop waits for the killer, brings the nodes back, and returns what it
// did (nil if nothing was killed). It uses its own deadline, not ctx: the
// nodes come back even after Ctrl-C. A node that does not come back is in
// the record, not an error.
func (d *nodesDown) Stop(context.Context, vegeta.Results) (Record, error) {
	got := <-d.out
	if got.kill == nil {
		return nil, nil
	}
	if got.restore != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := got.restore(ctx); err != nil && got.kill.Err == "" {
			got.kill.Err = err.Error()
		}
	}
	return got.kill, nil
}

// Why describes a --redlock-kill (of the five Redis nodes) or an
// --etcd-kill (of the three etcd members), and what the answers after it
// were.
func (k *Kill) Why(s Sale) string {
	total := k.Of
	_, what, _ := strings.Cut(k.Noun, " ") // "nodes", "members"
	line := fmt.Sprintf("%s %s of %d went down at %v", what, nodeList(k.Nodes, 0), total, k.At.Round(10*time.Millisecond))
	if up := total - len(k.Nodes); up > total/2 {
		line += fmt.Sprintf(", %d of %d still a majority", up, total)
	} else {
		line += fmt.Sprintf(", only %d of %d left: no majority", up, total)
	}
	line += k.after(s)
	if k.Err != "" {
		line += " (" + k.Err + ")"
	}
	return line
}

// after says what the answers to the requests sent after the kill were:
// refused (503), orders, or sold out. A kill after the sale sold out
// refused nothing, and says so.
func (k *Kill) after(s Sale) string {
	if len(s.Results) == 0 {
		return ""
	}
	at := k.when
	if at.IsZero() {
		begin := s.Results[0].Timestamp
		for _, r := range s.Results {
			if r.Timestamp.Before(begin) {
				begin = r.Timestamp
			}
		}
		at = begin.Add(k.At)
	}
	var sent, refused, created, soldOut int
	for i := range s.Results {
		r := &s.Results[i]
		if r.Timestamp.Before(at) {
			continue
		}
		sent++
		switch kind := tally.Classify(r); {
		case r.Code == http.StatusServiceUnavailable:
			refused++
		case kind == tally.KindCreated:
			created++
		case kind == tally.KindSoldOut:
			soldOut++
		}
	}
	switch {
	case sent == 0:
		return "; no request was sent after it"
	case created == 0 && refused == 0 && soldOut > 0 && s.Audit.Sold >= s.Audit.InitialStock:
		return fmt.Sprintf("; of the %d requests sent after it none was refused and none made an order (%d were told sold out): the product had sold out before the kill", sent, soldOut)
	}
	return fmt.Sprintf("; of the %d requests sent after it, %d were refused (503), %d made an order, %d were told sold out", sent, refused, created, soldOut)
}

// nodeList names nodes from 1: the given ones, or, with nodes nil, those
// from index from to the last of the five Redis nodes.
func nodeList(nodes []int, from int) string {
	if nodes == nil {
		for i := from; i < fleet.RedisNodes; i++ {
			nodes = append(nodes, i)
		}
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = fmt.Sprint(n + 1)
	}
	return strings.Join(names, ",")
}
