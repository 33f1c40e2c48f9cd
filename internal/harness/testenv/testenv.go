// Package testenv owns the backends that tests run against. Every helper
// gives a test real servers — in-process ones always (miniredis, SQLite,
// embedded etcd), and the real Redis, MySQL/MariaDB and etcd servers named
// by the environment when they are set — each behind something that lets
// the test inject faults, and each cleaned up when the test ends:
//
//	FLASHSALE_TEST_REDIS_ADDRS     five Redis masters, host:port,host:port,...
//	FLASHSALE_TEST_MYSQL_DSN       user:pass@tcp(host:port)/dbname?...
//	FLASHSALE_TEST_ETCD_ENDPOINTS  three etcd members, host:port,...
//	FLASHSALE_TEST_ETCD_PIDS       their process ids, to pause them
//	FLASHSALE_TEST_ZOOKEEPER       three ZooKeeper members, host:port,...
//	FLASHSALE_TEST_ZOOKEEPER_PIDS  their process ids, to pause them
//	FLASHSALE_TEST_REDIS_CLUSTER   a Redis Cluster's nodes, host:port,...
//
// ZooKeeper has no embedded mode (no ZooKeeper server runs in a Go
// process): NewZooKeeper skips a test where no ensemble is named. Nor has
// a Redis Cluster (miniredis has no cluster mode): Cluster and
// NewRedisCluster skip where none is named (cluster.go).
//
// NewSentinels starts a replicated Redis of the test's own from the
// redis-server and redis-sentinel binaries: a master, a replica and three
// Sentinels (FLASHSALE_TEST_REQUIRE_SENTINEL=1 makes their absence a
// failure rather than a skip).
//
// Redis, DB and Backends run a test function once per available mode, as
// subtests named "embedded" and "real". A variable that is set but malformed
// fails the test with a message that says what is wrong; it never skips
// silently.
//
// Faults are injected by stopping the real thing or by wrapping it, never by
// mocking the code under test: every Redis node and the MySQL server are
// reached through a loopback TCP Proxy per test, which can drop all
// connections, refuse new ones and add latency; embedded Redis nodes are
// also closed for real; SQLite, which has no network, is wrapped at the
// database/sql driver level (see TestDB.Stop). A COMMIT that lands and
// loses its answer needs a wrapper on either database: a pool from
// TestDB.OpenPool has one (CommitFault).
//
// Real servers are shared with other test packages running at the same time:
// nothing here ever flushes a Redis or touches a database it did not create.
// Each test gets its own key prefix (RedisNodes.Key, EtcdCluster.Key) and
// its own database. The etcd members cannot be put behind a proxy per test
// (losing a quorum is a fault of the cluster, not of one client's
// connections), so a test that stops real members reserves the cluster
// first (EtcdCluster.Reserve) and the other test processes wait.
//
// A test of code that needs both backends reads:
//
//	func TestSoldOut(t *testing.T) {
//		testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
//			product := b.Redis.Key("p1")     // unique per test; cleaned up on real Redis
//			clients := b.Redis.Clients()     // five nodes, through the proxies
//			db := b.DB.DB()                  // migrated, this test's own
//			// ...
//			b.Redis.Stop(0)                  // node 0 down; b.Redis.Start(0) brings it back
//			b.DB.Stop()                      // database down; b.DB.Start()
//		})
//	}
package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Environment variables naming the real backends.
const (
	EnvRedisAddrs = "FLASHSALE_TEST_REDIS_ADDRS"
	EnvMySQLDSN   = "FLASHSALE_TEST_MYSQL_DSN"
)

// RedisNodeCount is the number of Redis nodes every mode provides: five
// independent masters, as Redlock wants.
const RedisNodeCount = 5

// Mode says which backends a helper runs on.
type Mode string

// The modes; they are also the subtest names.
const (
	// Embedded backends run in the test process: miniredis and SQLite.
	Embedded Mode = "embedded"
	// Real backends are the servers named by the environment.
	Real Mode = "real"
)

// RedisModes returns Embedded, plus Real when FLASHSALE_TEST_REDIS_ADDRS is
// set. A malformed value fails tb (Fatal).
func RedisModes(tb testing.TB) []Mode {
	tb.Helper()
	if _, ok := realRedisAddrs(tb); ok {
		return []Mode{Embedded, Real}
	}
	return []Mode{Embedded}
}

// DBModes returns Embedded, plus Real when FLASHSALE_TEST_MYSQL_DSN is set.
func DBModes(tb testing.TB) []Mode {
	tb.Helper()
	if _, ok := realMySQLDSN(); ok {
		return []Mode{Embedded, Real}
	}
	return []Mode{Embedded}
}

// realRedisAddrs parses FLASHSALE_TEST_REDIS_ADDRS. Unset or empty: false.
// Set but not exactly five distinct host:port addresses: tb.Fatal.
func realRedisAddrs(tb testing.TB) ([]string, bool) {
	tb.Helper()
	raw := strings.TrimSpace(os.Getenv(EnvRedisAddrs))
	if raw == "" {
		return nil, false
	}
	var addrs []string
	seen := map[string]bool{}
	for _, a := range strings.Split(raw, ",") {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" {
			tb.Fatalf("%s=%q: %q is not host:port (want %d comma-separated addresses like 127.0.0.1:7101)",
				EnvRedisAddrs, raw, a, RedisNodeCount)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			tb.Fatalf("%s=%q: %q has no valid port", EnvRedisAddrs, raw, a)
		}
		if seen[a] {
			tb.Fatalf("%s=%q: %s is listed twice; Redlock needs independent nodes", EnvRedisAddrs, raw, a)
		}
		seen[a] = true
		addrs = append(addrs, a)
	}
	if len(addrs) != RedisNodeCount {
		tb.Fatalf("%s=%q lists %d addresses, want exactly %d (unset it to run on embedded nodes only)",
			EnvRedisAddrs, raw, len(addrs), RedisNodeCount)
	}
	return addrs, true
}

// realMySQLDSN returns FLASHSALE_TEST_MYSQL_DSN when it is set and not
// empty. It is validated where it is used (newRealDB).
func realMySQLDSN() (string, bool) {
	dsn := strings.TrimSpace(os.Getenv(EnvMySQLDSN))
	return dsn, dsn != ""
}

// randomID returns n random bytes in hex, for key prefixes and names.
func randomID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("testenv: crypto/rand: %v", err))
	}
	return hex.EncodeToString(b)
}
