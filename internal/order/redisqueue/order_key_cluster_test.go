package redisqueue_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
)

// An accepted order's key ("flashsale:queue:order:{<order id>}") lives in
// its order's slot, usually on another master than its product's. The
// accept's pipeline sends its SET NX there beside the script on the
// product's master; on a cluster the two can part: one master slow (a
// pause, a partition, a failover), the other fine.

// TestAcceptWithoutItsOrderKeyIsInDoubt: the master of an order's key
// holds its writes (CLIENT PAUSE WRITE) while the product's master is
// fine. The script queues the order, but Status could not find it: the
// buyer is not told it was accepted (202) but that Redis did not answer
// (in doubt), and their retry finds the order, a duplicate naming it.
func TestAcceptWithoutItsOrderKeyIsInDoubt(t *testing.T) {
	c, cl := ownCluster(t)
	ctx := t.Context()
	product := "rq"
	home := shardOf(t, c, "{"+product+"}")
	id, other := "", (*redisproc.Process)(nil)
	for i := 0; other == nil; i++ {
		id = fmt.Sprintf("o%d", i)
		if m := shardOf(t, c, "{"+id+"}"); m != home {
			other = m
		}
	}
	q := redisqueue.New(cl)
	if err := q.Load(ctx, product, 10); err != nil {
		t.Fatal(err)
	}
	if err := other.Client.Do(ctx, "CLIENT", "PAUSE", 3000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	_, err := q.Accept(ctx, redisqueue.Order{ID: id, UserID: "u1", ProductID: product, Quantity: 1, CreatedAt: time.Now()})
	if uerr := other.Client.Do(ctx, "CLIENT", "UNPAUSE").Err(); uerr != nil {
		t.Fatal(uerr)
	}
	if !errors.Is(err, stock.ErrUnavailable) {
		t.Fatalf("Accept while its order key's master held writes = %v, want stock.ErrUnavailable (in doubt), not accepted", err)
	}
	if b, err := q.Backlog(ctx, product); err != nil || b.Length != 1 {
		t.Fatalf("backlog %+v, %v: want the order queued all the same", b, err)
	}
	_, err = q.Accept(ctx, redisqueue.Order{ID: id + "-again", UserID: "u1", ProductID: product, Quantity: 1, CreatedAt: time.Now()})
	var dup *redisqueue.DuplicateError
	if !errors.As(err, &dup) || dup.Order != id {
		t.Errorf("the buyer's retry = %v, want a duplicate naming %s", err, id)
	}
}

// ownCluster starts a Redis Cluster of the test's own (it pauses a
// master) and a cluster client with the shop's settings (app's
// newClusterClient: 500 ms timeouts, nothing resent).
func ownCluster(t *testing.T) (*redisproc.Cluster, *redis.ClusterClient) {
	t.Helper()
	if os.Getenv(testenv.EnvRequireRedisCluster) != "1" {
		testenv.SkipShort(t, "starts six redis-server processes")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := redisproc.StartCluster(ctx, redisproc.ClusterConfig{Dir: t.TempDir()})
	if errors.Is(err, redisproc.ErrMissingClusterBinaries) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: c.Addrs(), MaxRedirects: -1, MaxRetries: -1, ClusterStateReloadInterval: time.Second,
		DialTimeout: 500 * time.Millisecond, DialerRetries: 1, ReadTimeout: 500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond, ContextTimeoutEnabled: true, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { cl.Close() })
	return c, cl
}

// shardOf is the master of key's slot.
func shardOf(t *testing.T, c *redisproc.Cluster, key string) *redisproc.Process {
	t.Helper()
	sh, err := c.SlotShard(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return sh.Master
}
