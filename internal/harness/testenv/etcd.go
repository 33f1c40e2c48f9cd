package testenv

import (
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flashsale/flashsale/internal/embedded"
)

// Environment variables naming a real etcd cluster: its members' client
// URLs (or host:port), comma-separated, and, optionally, their process ids
// in the same order, which lets a test pause a member (SIGSTOP) as if it
// had stopped, and resume it (SIGCONT). .ci/run sets both.
const (
	EnvEtcdEndpoints = "FLASHSALE_TEST_ETCD_ENDPOINTS"
	EnvEtcdPids      = "FLASHSALE_TEST_ETCD_PIDS"
)

// EtcdMemberCount is the number of members the embedded cluster has.
const EtcdMemberCount = 3

// Etcd runs fn as the subtest "embedded", on a fresh three-member cluster
// in the test process, and, when FLASHSALE_TEST_ETCD_ENDPOINTS is set, as
// the subtest "real" on that cluster. Each subtest gets its own key prefix.
// A real cluster that does not answer fails t.
func Etcd(t *testing.T, fn func(t *testing.T, c *EtcdCluster)) {
	t.Helper()
	for _, m := range EtcdModes() {
		t.Run(string(m), func(t *testing.T) { fn(t, NewEtcd(t, m)) })
	}
}

// EtcdModes returns Embedded, plus Real when FLASHSALE_TEST_ETCD_ENDPOINTS
// is set.
func EtcdModes() []Mode {
	if len(realEtcdEndpoints()) > 0 {
		return []Mode{Embedded, Real}
	}
	return []Mode{Embedded}
}

// realEtcdEndpoints parses FLASHSALE_TEST_ETCD_ENDPOINTS; nil if unset.
func realEtcdEndpoints() []string {
	var out []string
	for _, e := range strings.Split(os.Getenv(EnvEtcdEndpoints), ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// EtcdCluster is one test's etcd cluster. Its methods are safe for
// concurrent use, except those that fail the test (Client), which must be
// called from the test's goroutine.
type EtcdCluster struct {
	tb        testing.TB
	mode      Mode
	id        string
	endpoints []string
	members   *embedded.Etcd // nil in Real mode
	procs     *memberProcs   // Real mode: the members' processes, to pause

	mu      sync.Mutex
	clients []*clientv3.Client
}

// NewEtcd gives tb an etcd cluster in mode m, cleaned up when tb ends:
// Embedded starts three members in process; Real uses the cluster of
// FLASHSALE_TEST_ETCD_ENDPOINTS (tb fails if it is unset or does not
// answer). The test's keys are deleted from a real cluster at the end. A
// real cluster is shared with the other test processes of the run: NewEtcd
// waits while one of them has reserved it (see Reserve).
func NewEtcd(tb testing.TB, m Mode) *EtcdCluster {
	tb.Helper()
	c := &EtcdCluster{tb: tb, mode: m, id: "t" + randomID(5)}
	switch m {
	case Embedded:
		members, err := embedded.StartEtcd(EtcdMemberCount)
		if err != nil {
			tb.Fatalf("testenv: %v", err)
		}
		c.members = members
		c.endpoints = members.Endpoints()
	default:
		c.endpoints = realEtcdEndpoints()
		if len(c.endpoints) == 0 {
			tb.Fatalf("testenv: %s is not set", EnvEtcdEndpoints)
		}
		c.procs = newMemberProcs(tb, "etcd cluster", EnvEtcdPids, len(c.endpoints))
		realEtcdGuard.share(tb, c.endpoints) // let go of after close, below
	}
	tb.Cleanup(c.close)
	cl := c.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cl.Get(ctx, "health"); err != nil {
		tb.Fatalf("testenv: etcd at %s does not answer: %v", strings.Join(c.endpoints, ","), err)
	}
	return c
}

// Mode reports whether the cluster is embedded or real.
func (c *EtcdCluster) Mode() Mode { return c.mode }

// Endpoints returns the members' client URLs.
func (c *EtcdCluster) Endpoints() []string { return append([]string(nil), c.endpoints...) }

// Key returns name made unique to this test.
func (c *EtcdCluster) Key(name string) string { return c.id + ":" + name }

// Client returns a fresh client on every member, as another process would
// have, closed when the test ends.
func (c *EtcdCluster) Client() *clientv3.Client {
	c.tb.Helper()
	cl, err := clientv3.New(clientv3.Config{
		Endpoints:   c.endpoints,
		DialTimeout: 5 * time.Second,
		// As the shop's (internal/app): a paused member is noticed.
		DialKeepAliveTime:    time.Second,
		DialKeepAliveTimeout: 500 * time.Millisecond,
		Logger:               zap.NewNop(), // a stopped member is an expected fault here
	})
	if err != nil {
		c.tb.Fatalf("testenv: etcd client: %v", err)
	}
	c.mu.Lock()
	c.clients = append(c.clients, cl)
	c.mu.Unlock()
	return cl
}

// Reserve keeps the other test processes off a real cluster from now until
// the test ends and its members are back, so that the test may stop them:
// the members are shared by every test process of the run, and a paused
// member is paused for all of them. It waits until the tests that are
// using the cluster elsewhere have ended. Stop needs it in Real mode; in
// Embedded mode it does nothing. Call it from the test's goroutine before
// the test starts its work.
func (c *EtcdCluster) Reserve() {
	c.tb.Helper()
	if c.mode != Real {
		return
	}
	realEtcdGuard.reserve(c.tb)
	c.procs.reserve()
}

// Stop takes member i down: an embedded member is stopped; a real one is
// paused with SIGSTOP (its peers and clients see it stop answering), which
// needs FLASHSALE_TEST_ETCD_PIDS and Reserve, and is resumed when the test
// ends at the latest. It panics if i is out of range, and fails the test
// (Errorf) if a real member's process is unknown or the cluster is not
// reserved. Any goroutine may call it; once the test has ended it does
// nothing.
func (c *EtcdCluster) Stop(i int) {
	if c.members != nil {
		c.members.Stop(i)
		return
	}
	c.procs.signal(i, syscall.SIGSTOP)
}

// Start brings member i back and, for an embedded member, waits until it
// has rejoined (start the stopped members concurrently when a quorum is
// gone: a member alone cannot rejoin). A real member is resumed with
// SIGCONT.
func (c *EtcdCluster) Start(i int) {
	if c.members != nil {
		if err := c.members.Restart(i); err != nil {
			c.tb.Errorf("testenv: %v", err)
		}
		return
	}
	c.procs.signal(i, syscall.SIGCONT)
}

// close deletes the test's keys from a real cluster, closes the clients,
// and stops an embedded cluster.
func (c *EtcdCluster) close() {
	if c.procs != nil {
		c.procs.close()
	}
	c.mu.Lock()
	clients := c.clients
	c.clients = nil
	c.mu.Unlock()
	if c.mode == Real && len(clients) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = clients[0].Delete(ctx, c.id, clientv3.WithPrefix())
		cancel()
	}
	for _, cl := range clients {
		cl.Close()
	}
	if c.members != nil {
		c.members.Close()
	}
}
