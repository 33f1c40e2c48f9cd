package embedded_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/embedded"
)

// Three members keep a quorum with one of them down, and lose it with two:
// a write then does not go through until a member comes back.
func TestEtcdQuorum(t *testing.T) {
	e, err := embedded.StartEtcd(3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	c, err := clientv3.New(clientv3.Config{Endpoints: e.Endpoints(), DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	put := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := c.Put(ctx, "k", "v")
		return err
	}
	if err := put(5 * time.Second); err != nil {
		t.Fatalf("all three up: %v", err)
	}
	e.Stop(0)
	if err := put(5 * time.Second); err != nil {
		t.Fatalf("two of three up: %v", err)
	}
	e.Stop(1)
	if err := put(500 * time.Millisecond); err == nil {
		t.Fatal("one of three up: the write went through without a quorum")
	}
	if err := e.Restart(1); err != nil {
		t.Fatal(err)
	}
	if err := put(5 * time.Second); err != nil {
		t.Fatalf("quorum back: %v", err)
	}
}
