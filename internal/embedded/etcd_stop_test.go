package embedded_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/embedded"
)

// Crashing two of three members loses the quorum at once, as two
// crashes would, not once their clients have drained: with a watch open on each
// of them (a drain then takes etcd's request timeout, 5.2 s), writes
// through the third fail as soon as Crash(0, 1) is under way. Stopped one
// by one (Stop), the second member voted on while the first drained, and
// over a thousand writes went through.
func TestEtcdCrashTogether(t *testing.T) {
	e, err := embedded.StartEtcd(3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	client := func(i int) *clientv3.Client {
		c, err := clientv3.New(clientv3.Config{Endpoints: e.Endpoints()[i : i+1], DialTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	put := func(c *clientv3.Client, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		_, err := c.Put(ctx, "k", "v")
		return err
	}
	writer := client(2)
	var watches []clientv3.WatchChan
	for i := range 2 {
		watches = append(watches, client(i).Watch(t.Context(), "k"))
	}
	if err := put(writer, 5*time.Second); err != nil {
		t.Fatalf("all three up: %v", err)
	}
	for i, w := range watches { // both streams are open
		select {
		case <-w:
		case <-time.After(5 * time.Second):
			t.Fatalf("the watch on member %d saw no write", i+1)
		}
	}

	stopped := make(chan struct{})
	go func() {
		e.Crash(0, 1)
		close(stopped)
	}()
	// A write or two may land before the members' raft stops; a member
	// that voted on while it drained would let through one per round trip
	// for seconds.
	const few = 100
	landed := 0
	for {
		select {
		case <-stopped:
			t.Logf("%d writes went through during Crash", landed)
			if landed >= few {
				t.Fatalf("%d writes went through while Crash(0, 1) drained, want fewer than %d: a member voted on", landed, few)
			}
			return
		default:
		}
		if put(writer, 100*time.Millisecond) == nil {
			landed++
		}
	}
}
