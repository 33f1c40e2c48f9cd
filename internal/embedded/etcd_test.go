package embedded_test

import (
	"context"
	"errors"
	"sync"
	"syscall"
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

// Clusters started at once, each losing a port between choosing it and
// binding it on its first try (see StartEtcd), all start, and each is a
// cluster of its own. Member 2's peer port is the one lost, as in the
// failure this test was written for: member 1 is running by then and must
// be stopped before the next try.
func TestEtcdClustersStartTogether(t *testing.T) {
	const clusters = 3
	embedded.LoseEtcdPortRace(t, 3, clusters)
	started := make(chan *embedded.Etcd, clusters)
	failures := make(chan error, clusters)
	var wg sync.WaitGroup
	for range clusters {
		wg.Go(func() {
			e, err := embedded.StartEtcd(3)
			if err != nil {
				failures <- err
				return
			}
			started <- e
		})
	}
	wg.Wait()
	close(started)
	close(failures)
	for e := range started {
		t.Cleanup(e.Close)
		c, err := clientv3.New(clientv3.Config{Endpoints: e.Endpoints(), DialTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := c.Put(ctx, "k", "v")
		cancel()
		c.Close()
		if err != nil {
			t.Errorf("put on %v: %v", e.Endpoints(), err)
		} else if rev := resp.Header.Revision; rev != 2 {
			t.Errorf("put on %v: revision %d, want 2 (a cluster of its own)", e.Endpoints(), rev)
		}
	}
	for err := range failures {
		t.Errorf("StartEtcd: %v", err)
	}
}

// A start that loses a port on every try gives up with the bind error.
// Member 1's client port is the one lost, so that no try leaves a member
// to stop.
func TestEtcdStartGivesUp(t *testing.T) {
	embedded.LoseEtcdPortRace(t, 0, embedded.EtcdStartTries)
	e, err := embedded.StartEtcd(3)
	if err == nil {
		e.Close()
		t.Fatalf("StartEtcd with every try's port taken: got no error")
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("StartEtcd: got %v, want an error wrapping EADDRINUSE", err)
	}
}
