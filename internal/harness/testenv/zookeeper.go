package testenv

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// Environment variables naming a real ZooKeeper ensemble: its members'
// client addresses, host:port, comma-separated, and, optionally, their
// process ids in the same order, which lets a test pause a member
// (SIGSTOP) as if it had stopped, and resume it (SIGCONT). .ci/run sets
// both. No ZooKeeper server runs inside a Go process: without an ensemble
// the tests that need one skip.
const (
	EnvZooKeeper     = "FLASHSALE_TEST_ZOOKEEPER"
	EnvZooKeeperPids = "FLASHSALE_TEST_ZOOKEEPER_PIDS"
)

// ZooKeeperStartHint is how to get an ensemble to test against.
const ZooKeeperStartHint = "with java and Debian's zookeeper installed, " +
	"go run ./cmd/zkensemble start -dir DIR prints the servers and pids to export"

// realZooKeeperGuard shares the real ensemble with the other test
// processes, as realEtcdGuard shares the etcd cluster.
var realZooKeeperGuard = clusterGuard{what: "ZooKeeper ensemble"}

// ZooKeeper is one test's view of the real ensemble: its servers, a path
// of its own to keep its nodes under (Root), proxies of its own in front
// of the members, and the members' processes, which it may pause once it
// has reserved the ensemble. Its methods are safe for concurrent use,
// except those that fail the test (Conn, Proxies, Reserve), which must be
// called from the test's goroutine.
type ZooKeeper struct {
	tb      testing.TB
	servers []string
	procs   *memberProcs // the members' processes, to pause
	root    string

	mu      sync.Mutex
	conns   []*zk.Conn
	proxies []*Proxy
}

// NewZooKeeper gives tb the real ensemble of FLASHSALE_TEST_ZOOKEEPER, or
// skips tb, saying how to get one, where it is not set. A malformed value,
// or an ensemble that does not answer within ten seconds, fails tb. The
// test's nodes (everything under Root) are deleted when it ends, after the
// cleanups it registered later (so close the test's clients in one).
func NewZooKeeper(tb testing.TB) *ZooKeeper {
	tb.Helper()
	servers := realZooKeeperServers(tb)
	if len(servers) == 0 {
		tb.Skipf("testenv: %s is not set: no ZooKeeper ensemble to test against (%s)", EnvZooKeeper, ZooKeeperStartHint)
	}
	z := &ZooKeeper{tb: tb, servers: servers, root: "/flashsale-test/t" + randomID(5)}
	z.procs = newMemberProcs(tb, "ZooKeeper ensemble", EnvZooKeeperPids, len(servers))
	realZooKeeperGuard.share(tb, servers) // let go of after close, below
	tb.Cleanup(z.close)
	c := z.Conn()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, _, err := c.Exists("/")
		if err == nil {
			return z
		}
		if ctx.Err() != nil {
			tb.Fatalf("testenv: ZooKeeper at %s does not answer: %v", strings.Join(servers, ","), err)
		}
		time.Sleep(50 * time.Millisecond) // the client reconnects meanwhile
	}
}

// Servers returns the members' client addresses, in member order.
func (z *ZooKeeper) Servers() []string { return slices.Clone(z.servers) }

// Root returns the znode path this test keeps its nodes under; it does not
// exist until something creates it.
func (z *ZooKeeper) Root() string { return z.root }

// Conn returns a fresh client on every member, as another process would
// have, closed when the test ends: for looking at the nodes. It connects
// in the background.
func (z *ZooKeeper) Conn() *zk.Conn {
	z.tb.Helper()
	c, _, err := zk.Connect(z.servers, 4*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietZK{}))
	if err != nil {
		z.tb.Fatalf("testenv: zookeeper client: %v", err)
	}
	z.mu.Lock()
	z.conns = append(z.conns, c)
	z.mu.Unlock()
	return c
}

// Proxies returns the test's own proxies, one in front of each member, in
// member order, created on first use and closed when the test ends:
// stopping or holding one cuts or stalls this test's connections to that
// member only.
func (z *ZooKeeper) Proxies() []*Proxy {
	z.tb.Helper()
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.proxies == nil {
		for _, s := range z.servers {
			p, err := NewProxy(s)
			if err != nil {
				z.tb.Fatalf("testenv: proxy for %s: %v", s, err)
			}
			z.proxies = append(z.proxies, p)
		}
	}
	return slices.Clone(z.proxies)
}

// Reserve keeps the other test processes off the ensemble from now until
// the test ends and its members are back, so that the test may pause
// them; it waits until the tests using the ensemble elsewhere have ended.
// Call it from the test's goroutine before the test starts its work.
func (z *ZooKeeper) Reserve() {
	z.tb.Helper()
	realZooKeeperGuard.reserve(z.tb)
	z.procs.reserve()
}

// Stop pauses member i with SIGSTOP, as if it had hung: its peers and
// clients see it stop answering. It needs FLASHSALE_TEST_ZOOKEEPER_PIDS
// and Reserve (else it fails the test, Errorf), and the member is resumed
// when the test ends at the latest. Start resumes it. Any goroutine may
// call them; once the test has ended they do nothing.
func (z *ZooKeeper) Stop(i int) { z.procs.signal(i, syscall.SIGSTOP) }

// Start resumes member i after Stop.
func (z *ZooKeeper) Start(i int) { z.procs.signal(i, syscall.SIGCONT) }

// CanStop reports whether the members' processes are known, so that Stop
// can pause them.
func (z *ZooKeeper) CanStop() bool { return z.procs.pids != nil }

// close resumes the members this test paused, closes its proxies, deletes
// its nodes and closes its clients.
func (z *ZooKeeper) close() {
	z.procs.close()
	z.mu.Lock()
	conns, proxies := z.conns, z.proxies
	z.conns, z.proxies = nil, nil
	z.mu.Unlock()
	for _, p := range proxies {
		p.Close()
	}
	if len(conns) > 0 {
		deleteTree(conns[0], z.root, time.Now().Add(10*time.Second))
	}
	for _, c := range conns {
		c.Close()
	}
}

// deleteTree deletes path and everything under it, trying until deadline
// while the ensemble does not answer (a member the test paused is back,
// but the ensemble may still be electing).
func deleteTree(c *zk.Conn, path string, deadline time.Time) {
	for {
		kids, _, err := c.Children(path)
		if err == nil {
			for _, k := range kids {
				deleteTree(c, path+"/"+k, deadline)
			}
			err = c.Delete(path, -1)
		}
		if err == nil || errors.Is(err, zk.ErrNoNode) || time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Millisecond) // the ensemble is electing, or a node came meanwhile
	}
}

// realZooKeeperServers parses FLASHSALE_TEST_ZOOKEEPER: nil if unset;
// host:port each, or tb fails.
func realZooKeeperServers(tb testing.TB) []string {
	tb.Helper()
	raw := strings.TrimSpace(os.Getenv(EnvZooKeeper))
	if raw == "" {
		return nil
	}
	var out []string
	for _, s := range strings.Split(raw, ",") {
		s = strings.TrimSpace(s)
		host, port, err := net.SplitHostPort(s)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			tb.Fatalf("testenv: %s=%q: %q is not host:port", EnvZooKeeper, raw, s)
		}
		out = append(out, s)
	}
	return out
}

// quietZK discards the ZooKeeper client's log: a paused member is an
// expected fault here.
type quietZK struct{}

func (quietZK) Printf(string, ...any) {}
