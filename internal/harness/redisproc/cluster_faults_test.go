package redisproc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/faultproxy"
)

// A master announced on a proxy's port takes its replica there, and
// announced on port 0 takes it back to its own port: the cluster failover
// fault holds the link this way and lets it go again. In sync, the
// offsets agree once the replica has caught up.
func TestClusterAnnounceMovesTheReplica(t *testing.T) {
	c := startCluster(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sh, err := c.SlotShard(ctx, "{a}k")
	if err != nil {
		t.Fatal(err)
	}
	master, replica := sh.Master, sh.Replicas[0]
	link, err := faultproxy.New(master.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	proxied := mustPort(t, link.Addr())
	follows := func(port int) {
		t.Helper()
		if err := await(ctx, "the replica to follow port", func(ctx context.Context) (bool, string) {
			return c.Follows(ctx, replica, port), "not yet"
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Announce(ctx, master, proxied); err != nil {
		t.Fatal(err)
	}
	follows(proxied)
	if err := c.Announce(ctx, master, 0); err != nil {
		t.Fatal(err)
	}
	follows(master.Port())
	if c.Follows(ctx, replica, proxied) {
		t.Fatal("the replica follows the proxy and its master's own port at once")
	}
	if err := master.Client.Set(ctx, "{a}k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := await(ctx, "the replica to catch up", func(ctx context.Context) (bool, string) {
		m, r, err := c.Offsets(ctx, master, replica)
		return err == nil && m == r && m > 0, "behind"
	}); err != nil {
		t.Fatal(err)
	}
}

// The faults' tools fail with errors that say what went wrong: a process
// that is not one of the cluster's nodes cannot rejoin it, a replica
// nobody promotes is not awaited as master forever, and a dead node's
// offsets cannot be read.
func TestClusterFaultErrors(t *testing.T) {
	c := startCluster(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sh, err := c.SlotShard(ctx, "{b}k")
	if err != nil {
		t.Fatal(err)
	}
	master, replica := sh.Master, sh.Replicas[0]

	stranger := &Process{Addr: "127.0.0.1:1"}
	if err := c.Rejoin(ctx, stranger); err == nil || !strings.Contains(err.Error(), "not a node of this cluster") {
		t.Errorf("Rejoin of a stranger: %v, want not a node of this cluster", err)
	}

	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	err = c.AwaitMaster(short, replica)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AwaitMaster of a replica nobody promotes: %v, want the deadline", err)
	}

	c.Kill(replica)
	if _, _, err := c.Offsets(ctx, master, replica); err == nil || !strings.Contains(err.Error(), "replica "+replica.Addr) {
		t.Errorf("Offsets with the replica dead: %v, want an error naming it", err)
	}
	if _, _, err := c.Offsets(ctx, replica, master); err == nil || !strings.Contains(err.Error(), "master "+replica.Addr) {
		t.Errorf("Offsets with the master dead: %v, want an error naming it", err)
	}
}
