package queue_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/flashsale/flashsale/internal/queue"
	"github.com/flashsale/flashsale/internal/redisproc"
	"github.com/flashsale/flashsale/internal/testenv"
)

// From the cold review of --redis-cluster: an accepted order's key
// ("flashsale:queue:order:{<order id>}") lives in its order's slot, on
// another master than its product's. The accept's pipeline sends its SET
// NX there beside the script on the product's master; on a cluster the two
// can part: one master slow (a pause, a partition, a failover), the other
// fine.

// TestReviewClusterQueueOrderKeyOnAnotherMaster: the master of an order's
// key holds its writes for a moment (CLIENT PAUSE WRITE) while the
// product's master is fine. The accept is answered, the order queued; its
// status must say queued once that master answers again.
func TestReviewClusterQueueOrderKeyOnAnotherMaster(t *testing.T) {
	c, cl := reviewCluster(t)
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
	q := queue.New(cl)
	if err := q.Load(ctx, product, 10); err != nil {
		t.Fatal(err)
	}
	if err := other.Client.Do(ctx, "CLIENT", "PAUSE", 3000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err := q.Accept(ctx, queue.Order{ID: id, UserID: "u1", ProductID: product, Quantity: 1, CreatedAt: time.Now()})
	took := time.Since(began)
	if err := other.Client.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("Accept with the product's master fine: %v", err)
	}
	t.Logf("the accept took %v with an unrelated master paused", took)
	st, err := q.Status(ctx, id)
	if err != nil || st.Status != queue.StatusQueued {
		t.Errorf("Status of the accepted order = %+v, %v; want queued (the order is in %s's stream)", st, err, product)
	}
}

// TestReviewClusterQueueAcceptWaitsForAnUnrelatedMaster: every trip of
// accepts carries order keys of every master, so a master that hangs slows
// the accepts of every product, those on the healthy masters too, to the
// client's read timeout.
func TestReviewClusterQueueAcceptWaitsForAnUnrelatedMaster(t *testing.T) {
	c, cl := reviewCluster(t)
	ctx := t.Context()
	product := "rq2"
	home := shardOf(t, c, "{"+product+"}")
	var other *redisproc.Process
	for i := 0; other == nil; i++ {
		if m := shardOf(t, c, fmt.Sprintf("{k%d}", i)); m != home {
			other = m
		}
	}
	q := queue.New(cl)
	if err := q.Load(ctx, product, 100); err != nil {
		t.Fatal(err)
	}
	if err := other.Client.Do(ctx, "CLIENT", "PAUSE", 3000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	defer other.Client.Do(context.Background(), "CLIENT", "UNPAUSE")
	slow := 0
	for i := range 10 {
		began := time.Now()
		_, err := q.Accept(ctx, queue.Order{ID: fmt.Sprintf("x%d", i), UserID: fmt.Sprint("u", i), ProductID: product, Quantity: 1, CreatedAt: time.Now()})
		if err != nil {
			t.Fatalf("Accept %d: %v", i, err)
		}
		if time.Since(began) > 200*time.Millisecond {
			slow++
		}
	}
	if slow > 0 {
		t.Errorf("%d of 10 accepts of a product on a healthy master took over 200 ms while another master was paused", slow)
	}
}

// reviewCluster starts a Redis Cluster of the test's own (it pauses a
// master) and a cluster client with the shop's settings (app's
// newClusterClient: 500 ms timeouts, nothing resent).
func reviewCluster(t *testing.T) (*redisproc.Cluster, *redis.ClusterClient) {
	t.Helper()
	if os.Getenv("FLASHSALE_TEST_KNOWN_DEFECTS") != "1" {
		t.Skip("a defect the cold review of --redis-cluster found and left open; FLASHSALE_TEST_KNOWN_DEFECTS=1 runs it (it fails until fixed)")
	}
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
