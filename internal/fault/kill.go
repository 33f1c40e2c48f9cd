package fault

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/fleet"
	"github.com/flashsale/flashsale/internal/ledger"
	"github.com/flashsale/flashsale/internal/strategy"
)

// NodeKill is --redlock-kill and --etcd-kill: it takes nodes down halfway
// through an attack, the first Redis of the five Redis nodes in the
// redlock attack, the first Etcd of the three etcd members in the etcd
// attack. The first Redis node is the one lua, naive and the dedupe lock
// depend on; Redlock must not care which nodes go, only how many, and etcd
// which members, only how many. The nodes come back once the attack is
// over.
type NodeKill struct {
	Redis, Etcd int

	out chan killed
}

// Kill records one --redlock-kill or --etcd-kill: which nodes (0-based)
// went down when, and whether they came back.
type Kill struct {
	Nodes []int
	// At is when the nodes went down, since the attack began.
	At time.Duration
	// Err is why the nodes could not be taken down or brought back ("" if
	// all went well).
	Err string
}

// killed is what the killer goroutine did: the record for the report, and
// how to bring the nodes back (nil if it took nothing down).
type killed struct {
	kill    *Kill
	restore func(context.Context) error
}

// Arm starts the killer for a: it takes the nodes down at half a.Expected,
// unless a.Stopped closes or ctx ends first.
func (k *NodeKill) Arm(ctx context.Context, a *Attack) error {
	k.out = make(chan killed, 1)
	var n int
	var killer fleet.NodeKiller
	switch a.Strategy {
	case strategy.Redlock:
		n, killer = k.Redis, a.Fleet.Nodes
	case strategy.Etcd:
		n, killer = k.Etcd, a.Fleet.EtcdMembers
	}
	if n == 0 || killer == nil {
		k.out <- killed{}
		return nil
	}
	began := time.Now()
	half := a.Expected / 2
	go func() {
		t := time.NewTimer(half)
		defer t.Stop()
		select {
		case <-t.C:
		case <-a.Stopped:
			k.out <- killed{}
			return
		case <-ctx.Done():
			k.out <- killed{}
			return
		}
		nodes := make([]int, n)
		for i := range nodes {
			nodes[i] = i
		}
		rec := &Kill{Nodes: nodes, At: time.Since(began)}
		// Down for the rest of the attack, plus a little for the stragglers.
		restore, err := killer.Kill(ctx, nodes, a.Expected-half+250*time.Millisecond)
		if err != nil {
			rec.Err = err.Error()
		}
		k.out <- killed{kill: rec, restore: restore}
	}()
	return nil
}

// Stop waits for the killer, brings the nodes back, and records what it
// did (nothing if nothing was killed). It uses its own deadline, not ctx:
// the nodes come back even after Ctrl-C. A node that does not come back is
// in the record, not an error.
func (k *NodeKill) Stop(_ context.Context, _ vegeta.Results, into *Records) error {
	got := <-k.out
	if got.restore != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := got.restore(ctx); err != nil && got.kill.Err == "" {
			got.kill.Err = err.Error()
		}
	}
	into.Kill = got.kill
	return nil
}

// Why describes a --redlock-kill (of the five Redis nodes) or an
// --etcd-kill (of the three etcd members), and what the answers after it
// were.
func (k *Kill) Why(s Sale) string {
	what, total := "nodes", 5
	if s.Strategy == strategy.Etcd {
		what, total = "members", fleet.EtcdMembers
	}
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
	begin := s.Results[0].Timestamp
	for _, r := range s.Results {
		if r.Timestamp.Before(begin) {
			begin = r.Timestamp
		}
	}
	at := begin.Add(k.At)
	var sent, refused, created, soldOut int
	for i := range s.Results {
		r := &s.Results[i]
		if r.Timestamp.Before(at) {
			continue
		}
		sent++
		switch kind := ledger.Classify(r); {
		case r.Code == http.StatusServiceUnavailable:
			refused++
		case kind == ledger.KindCreated:
			created++
		case kind == ledger.KindSoldOut:
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
