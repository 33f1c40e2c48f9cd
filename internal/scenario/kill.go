package scenario

import (
	"context"
	"time"

	"github.com/flashsale/flashsale/internal/strategy"
)

// killed is what the killer goroutine did: the record for the report, and
// how to bring the nodes back (nil if it took nothing down).
type killed struct {
	kill    *Kill
	restore func(context.Context) error
}

// startKiller takes the first Settings.RedlockKill of the five Redis nodes
// down halfway through the redlock attack, if asked to. The first node is
// the one lua, naive and (in those modes) the dedupe lock depend on; Redlock
// must not care which nodes go, only how many. The returned channel yields
// one value once the nodes are down, or once stopped closes first.
func (a *attack) startKiller(ctx context.Context, planned int, stopped <-chan struct{}) <-chan killed {
	out := make(chan killed, 1)
	n := a.settings.RedlockKill
	if a.mode.Strategy() != strategy.Redlock || n == 0 || a.fleet.Nodes == nil {
		out <- killed{}
		return out
	}
	began := time.Now()
	expected := min(a.settings.Duration, time.Duration(float64(planned)/float64(a.settings.Rate)*float64(time.Second)))
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
		restore, err := a.fleet.Nodes.Kill(ctx, nodes, expected-half+250*time.Millisecond)
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
