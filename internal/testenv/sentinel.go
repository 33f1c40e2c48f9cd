package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnvRequireSentinel, set to 1, makes NewSentinels fail the test instead of
// skipping it where redis-server or redis-sentinel is not installed.
// .ci/run sets it, after installing them.
const EnvRequireSentinel = "FLASHSALE_TEST_REQUIRE_SENTINEL"

// SentinelMasterName is the name NewSentinels' Sentinels monitor their
// master under.
const SentinelMasterName = "flashsale"

// The Sentinels' timing: the master counts as down after
// sentinelDownAfter without an answer, and a failover that stalls is tried
// again after twice sentinelFailoverTimeout. Two Sentinels of three must
// agree that the master is down, and elect one of them to promote the
// replica; with these settings a failover takes a second or two.
const (
	sentinelCount           = 3
	sentinelQuorum          = 2
	sentinelDownAfter       = 500 * time.Millisecond
	sentinelFailoverTimeout = 2 * time.Second
	// sentinelsAgreeWithin bounds the wait at start: the Sentinels find
	// the replica at once (it is in sync before they start), and each
	// other through hello messages sent every two seconds.
	sentinelsAgreeWithin = 30 * time.Second
)

// Sentinels is one test's replicated Redis: a master, one replica and three
// Sentinels that watch them, each a real redis-server or redis-sentinel
// process on a free loopback port, with its configuration and log in the
// test's temporary directory and nothing persisted. Its methods fail the
// test on error and must be called from the test's goroutine.
type Sentinels struct {
	tb        testing.TB
	master    *redisProcess
	replica   *redisProcess
	sentinels []*redisProcess
	clients   []*redis.SentinelClient // one per Sentinel
}

// NewSentinels starts a master, its replica and three Sentinels for tb,
// and returns once every Sentinel names the master, knows the replica and
// knows the two other Sentinels: from then on a failover can happen. Every
// process is stopped by its pid when tb ends.
//
// Where redis-server or redis-sentinel is not on the PATH it skips tb,
// saying which is missing, or fails tb when FLASHSALE_TEST_REQUIRE_SENTINEL
// is 1. A process that does not start, or Sentinels that have not agreed
// within 30 s, fail tb.
func NewSentinels(tb testing.TB) *Sentinels {
	tb.Helper()
	server, sentinel := sentinelBinaries(tb)
	dir := tb.TempDir()
	s := &Sentinels{tb: tb}
	// Nothing on disk; the replica's first sync is sent at once, not after
	// the five seconds a diskless sync waits for more replicas by default.
	noDisk := []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--repl-diskless-sync-delay", "0"}

	s.master = startRedisProcess(tb, dir, "master", server, func(port int) []string {
		return append([]string{"--port", strconv.Itoa(port)}, noDisk...)
	})
	masterHost, masterPort := splitAddr(s.master.addr)
	s.replica = startRedisProcess(tb, dir, "replica", server, func(port int) []string {
		return append([]string{"--port", strconv.Itoa(port), "--replicaof", masterHost, masterPort}, noDisk...)
	})
	// A Sentinel finds replicas in the master's INFO, asked at once and
	// then every ten seconds: a replica that is in sync first is found at
	// once.
	s.await("the replica to be in sync", func(ctx context.Context) (bool, string) {
		info, err := s.master.client.Info(ctx, "replication").Result()
		if err != nil {
			return false, err.Error()
		}
		_, replicaPort := splitAddr(s.replica.addr)
		return strings.Contains(info, "port="+replicaPort+",state=online"), info
	})

	for i := range sentinelCount {
		name := fmt.Sprintf("sentinel%d", i+1)
		s.sentinels = append(s.sentinels, startRedisProcess(tb, dir, name, sentinel, func(port int) []string {
			conf := filepath.Join(dir, name+".conf")
			// A Sentinel rewrites its configuration file: it must be its own.
			text := strings.Join([]string{
				fmt.Sprintf("port %d", port),
				"bind 127.0.0.1",
				"dir " + dir,
				fmt.Sprintf("sentinel monitor %s %s %s %d", SentinelMasterName, masterHost, masterPort, sentinelQuorum),
				fmt.Sprintf("sentinel down-after-milliseconds %s %d", SentinelMasterName, sentinelDownAfter.Milliseconds()),
				fmt.Sprintf("sentinel failover-timeout %s %d", SentinelMasterName, sentinelFailoverTimeout.Milliseconds()),
			}, "\n") + "\n"
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				tb.Fatalf("testenv: %v", err)
			}
			return []string{conf}
		}))
		s.clients = append(s.clients, redis.NewSentinelClient(clientOptions(s.sentinels[i].addr)))
	}
	tb.Cleanup(func() {
		for _, c := range s.clients {
			c.Close()
		}
	})
	s.await("the Sentinels to agree on the master, the replica and each other", s.ready)
	return s
}

// Addrs returns the Sentinels' addresses.
func (s *Sentinels) Addrs() []string {
	var addrs []string
	for _, p := range s.sentinels {
		addrs = append(addrs, p.addr)
	}
	return addrs
}

// Master returns the address of the master the Sentinels were started on.
func (s *Sentinels) Master() string { return s.master.addr }

// Replica returns the address of the replica, the master after a failover.
func (s *Sentinels) Replica() string { return s.replica.addr }

// KillMaster kills the master the Sentinels were started on (SIGKILL: no
// goodbye to its clients or its replica) and returns once it has exited.
// The Sentinels then promote the replica (AwaitMaster waits for that).
func (s *Sentinels) KillMaster() { s.master.kill() }

// AwaitMaster waits until every Sentinel names addr as the master, and
// fails the test, with what they named last, if that takes more than
// within.
func (s *Sentinels) AwaitMaster(addr string, within time.Duration) {
	s.tb.Helper()
	s.awaitWithin("every Sentinel to name "+addr+" the master", within, func(ctx context.Context) (bool, string) {
		var named []string
		for _, c := range s.clients {
			named = append(named, masterNamedBy(ctx, c))
		}
		return !slices.ContainsFunc(named, func(n string) bool { return n != addr }), strings.Join(named, ", ")
	})
}

// ready reports whether every Sentinel names the master, lists the
// replica as up, and knows the other Sentinels.
func (s *Sentinels) ready(ctx context.Context) (bool, string) {
	for i, c := range s.clients {
		if got := masterNamedBy(ctx, c); got != s.master.addr {
			return false, fmt.Sprintf("sentinel%d names master %q", i+1, got)
		}
		replicas, err := c.Replicas(ctx, SentinelMasterName).Result()
		if err != nil || len(replicas) != 1 || replicas[0]["ip"]+":"+replicas[0]["port"] != s.replica.addr ||
			strings.Contains(replicas[0]["flags"], "down") || strings.Contains(replicas[0]["flags"], "disconnected") {
			return false, fmt.Sprintf("sentinel%d knows replicas %v (%v)", i+1, replicas, err)
		}
		peers, err := c.Sentinels(ctx, SentinelMasterName).Result()
		if err != nil || len(peers) != sentinelCount-1 {
			return false, fmt.Sprintf("sentinel%d knows %d other Sentinels (%v)", i+1, len(peers), err)
		}
	}
	return true, ""
}

// masterNamedBy asks one Sentinel for the master's address; on error it
// returns the error's text, for a failure message.
func masterNamedBy(ctx context.Context, c *redis.SentinelClient) string {
	hostPort, err := c.GetMasterAddrByName(ctx, SentinelMasterName).Result()
	if err != nil || len(hostPort) != 2 {
		return fmt.Sprintf("(%v %q)", err, hostPort)
	}
	return hostPort[0] + ":" + hostPort[1]
}

// await waits up to sentinelsAgreeWithin for cond, as awaitWithin does.
func (s *Sentinels) await(what string, cond func(context.Context) (bool, string)) {
	s.tb.Helper()
	s.awaitWithin(what, sentinelsAgreeWithin, cond)
}

// awaitWithin asks cond every 20 ms until it holds, and fails the test
// with cond's last status if it does not within d.
func (s *Sentinels) awaitWithin(what string, d time.Duration, cond func(context.Context) (bool, string)) {
	s.tb.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ok, status := cond(ctx)
		cancel()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("testenv: waited %v for %s; last: %s", d, what, status)
		}
		time.Sleep(20 * time.Millisecond) // the condition is the processes' state
	}
}

// sentinelBinaries returns the paths of redis-server and redis-sentinel,
// or skips (or fails, see EnvRequireSentinel) tb naming the missing ones.
func sentinelBinaries(tb testing.TB) (server, sentinel string) {
	tb.Helper()
	var missing []string
	server, err := exec.LookPath("redis-server")
	if err != nil {
		missing = append(missing, "redis-server")
	}
	sentinel, err = exec.LookPath("redis-sentinel")
	if err != nil {
		missing = append(missing, "redis-sentinel")
	}
	if len(missing) == 0 {
		return server, sentinel
	}
	msg := fmt.Sprintf("testenv: a replicated Redis under Sentinel needs %s on the PATH (Debian: apt-get install redis-server redis-sentinel)",
		strings.Join(missing, " and "))
	if os.Getenv(EnvRequireSentinel) == "1" {
		tb.Fatalf("%s, and %s=1 requires it", msg, EnvRequireSentinel)
	}
	tb.Skip(msg)
	return "", ""
}

// splitAddr splits 127.0.0.1:port.
func splitAddr(addr string) (host, port string) {
	i := strings.LastIndexByte(addr, ':')
	return addr[:i], addr[i+1:]
}
