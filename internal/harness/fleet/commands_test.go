package fleet

import (
	"context"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// On the real cluster: a thousand commands on one hash tag land on the
// master of its slot, and ClusterCommands counts them there. Other tests
// may share the cluster, so the count is at least a thousand and the
// master's share is the largest, not exact.
func TestClusterCommandsCountsTheTagsMaster(t *testing.T) {
	rc := testenv.NewRedisCluster(t)
	ctx := context.Background()
	cl := rc.Client()
	key := rc.Key("{loadshare}:n")
	master, err := cl.MasterForKey(ctx, key)
	if err != nil {
		t.Fatalf("MasterForKey: %v", err)
	}
	meter := ClusterCommands{Addrs: rc.Addrs()}
	stop := tally.CommandsSince(ctx, meter)
	for range 1000 {
		if err := cl.Incr(ctx, key).Err(); err != nil {
			t.Fatalf("INCR: %v", err)
		}
	}
	load := stop(ctx)
	if len(load) < 3 {
		t.Fatalf("load %+v, want every master of the cluster (3 or more)", load)
	}
	var on tally.MasterLoad
	for _, l := range load {
		if l.Addr == master.Options().Addr {
			on = l
		}
	}
	for _, l := range load {
		if l.Addr != on.Addr && l.Commands >= on.Commands {
			t.Errorf("master %s served %d, the tag's master %s %d", l.Addr, l.Commands, on.Addr, on.Commands)
		}
	}
	if addr, err := meter.MasterOf(ctx, "loadshare"); err != nil || addr != on.Addr {
		t.Errorf("MasterOf(loadshare) = %q, %v; want %s", addr, err, on.Addr)
	}
	if on.Commands < 1000 || on.Share < 0.5 {
		t.Errorf("the tag's master %s: %d commands, share %.2f; want 1000 or more, most of them (all: %+v)", on.Addr, on.Commands, on.Share, load)
	}
}
