package scenario

import (
	"context"
	"time"

	"github.com/flashsale/flashsale/internal/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// killed is what the killer goroutine did: the record for the report, and
// how to bring the nodes back (nil if it took nothing down).
type killed struct {
	kill    *Kill
	restore func(context.Context) error
}

// startKiller takes nodes down halfway through an attack, if asked to: the
// first Settings.RedlockKill of the five Redis nodes in the redlock attack,
// the first Settings.EtcdKill of the three etcd members in the etcd
// attack. The first Redis node is the one lua, naive and the dedupe lock
// depend on; Redlock must not care which nodes go, only how many, and etcd
// which members, only how many. The returned channel yields one value once
// the nodes are down, or once stopped closes first.
func (a *attack) startKiller(ctx context.Context, planned int, stopped <-chan struct{}) <-chan killed {
	out := make(chan killed, 1)
	var n int
	var killer fleet.NodeKiller
	switch a.mode.Strategy() {
	case strategy.Redlock:
		n, killer = a.settings.RedlockKill, a.fleet.Nodes
	case strategy.Etcd:
		n, killer = a.settings.EtcdKill, a.fleet.EtcdMembers
	}
	if n == 0 || killer == nil {
		out <- killed{}
		return out
	}
	began := time.Now()
	expected := min(a.settings.Duration, time.Duration(float64(planned)/a.settings.PerSecond()*float64(time.Second)))
	half := expected / 2
	go func() {
		t := time.NewTimer(half)
		defer t.Stop()
		select {
		case <-t.C:
		case <-stopped:
			out <- killed{}
			return
		case <-ctx.Done():
			out <- killed{}
			return
		}
		nodes := make([]int, n)
		for i := range nodes {
			nodes[i] = i
		}
		k := &Kill{Nodes: nodes, At: time.Since(began)}
		// Down for the rest of the attack, plus a little for the stragglers.
		restore, err := killer.Kill(ctx, nodes, expected-half+250*time.Millisecond)
		if err != nil {
			k.Err = err.Error()
		}
		out <- killed{kill: k, restore: restore}
	}()
	return out
}

// restore waits for the killer, brings the nodes back, and returns the
// record for the report (nil if nothing was killed). It uses its own
// deadline, not the run's context: the nodes come back even after Ctrl-C.
func (a *attack) restore(ch <-chan killed) *Kill {
	k := <-ch
	if k.restore != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := k.restore(ctx); err != nil && k.kill.Err == "" {
			k.kill.Err = err.Error()
		}
	}
	return k.kill
}
