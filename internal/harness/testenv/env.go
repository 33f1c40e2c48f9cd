package testenv

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// Env pairs Redis nodes and a database of the same mode, for tests of code
// that needs both (the order flow, the shop).
type Env struct {
	Mode  Mode        // Embedded or Real, for both
	Redis *RedisNodes // five nodes behind proxies
	DB    *TestDB     // a migrated database of the test's own
	// Etcd is nil unless the test asked for a cluster (WithEtcd): most
	// tests need none, and an embedded one costs a second to start.
	Etcd *EtcdCluster
	// Cluster is nil unless the test runs in Cluster's subtest: then the
	// single-node roles (lua, naive, fenced, dedupe, redis-decr,
	// redis-queue) go to it, and Redis serves redlock alone.
	Cluster *RedisCluster
}

// Single returns the client a shop's single-node roles use, given the
// clients of its Redis nodes: a new cluster client when b has a Cluster,
// else the first node's client.
func (b *Env) Single(clients []*redis.Client) redis.UniversalClient {
	if b.Cluster != nil {
		return b.Cluster.Client()
	}
	return clients[0]
}

// WithEtcd gives b an etcd cluster of b's mode, cleaned up when tb ends: the
// embedded one, or in Real mode the cluster of FLASHSALE_TEST_ETCD_ENDPOINTS
// when it is set (the embedded one otherwise, and the test says so in its
// log). It returns b.
func (b *Env) WithEtcd(tb testing.TB) *Env {
	tb.Helper()
	m := b.Mode
	if m == Real && len(realEtcdEndpoints()) == 0 {
		tb.Logf("testenv: %s is not set: etcd runs embedded beside the real Redis and database", EnvEtcdEndpoints)
		m = Embedded
	}
	b.Etcd = NewEtcd(tb, m)
	return b
}

// Backends runs fn as the subtest "embedded" (five miniredis nodes and
// SQLite) and, when both FLASHSALE_TEST_REDIS_ADDRS and
// FLASHSALE_TEST_MYSQL_DSN are set, as the subtest "real" (the real servers).
// It never mixes embedded and real backends. When only one of the two
// variables is set, the "real" subtest is skipped with a message naming the
// missing one; a malformed value fails t.
func Backends(t *testing.T, fn func(t *testing.T, b *Env)) {
	t.Helper()
	redisModes, dbModes := RedisModes(t), DBModes(t)
	t.Run(string(Embedded), func(t *testing.T) { fn(t, NewEnv(t, Embedded)) })
	switch hasRedis, hasDB := len(redisModes) > 1, len(dbModes) > 1; {
	case hasRedis && hasDB:
		t.Run(string(Real), func(t *testing.T) { fn(t, NewEnv(t, Real)) })
	case hasRedis:
		t.Run(string(Real), func(t *testing.T) {
			t.Skipf("real backends need %s too (only %s is set)", EnvMySQLDSN, EnvRedisAddrs)
		})
	case hasDB:
		t.Run(string(Real), func(t *testing.T) {
			t.Skipf("real backends need %s too (only %s is set)", EnvRedisAddrs, EnvMySQLDSN)
		})
	}
}

// NewEnv gives tb Redis nodes and a database in mode m (see NewRedis and
// NewDB), cleaned up when tb ends.
func NewEnv(tb testing.TB, m Mode) *Env {
	tb.Helper()
	return &Env{Mode: m, Redis: NewRedis(tb, m), DB: NewDB(tb, m)}
}

// EnvModes returns Embedded, plus Real when both variables are set.
func EnvModes(tb testing.TB) []Mode {
	tb.Helper()
	if len(RedisModes(tb)) > 1 && len(DBModes(tb)) > 1 {
		return []Mode{Embedded, Real}
	}
	return []Mode{Embedded}
}
