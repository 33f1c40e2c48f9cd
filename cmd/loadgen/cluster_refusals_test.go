package main

import (
	"io"
	"strings"
	"testing"
)

// TestFailoverRefusesRedisCluster: --failover starts a Sentinel-managed master for the
// single-node roles, which a Redis Cluster (--redis-cluster, or
// --cluster-failover's own) takes too; the two cannot both hold them, so
// the flags must refuse the pair before anything starts, as they refuse
// --redis-cluster with --redis-sentinel.
func TestFailoverRefusesRedisCluster(t *testing.T) {
	for _, args := range [][]string{
		{"--failover", "--redis-cluster", "127.0.0.1:7301"},
		{"--failover", "--cluster-failover"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) = nil, want a usage error: both name the Redis of the single-node roles", args)
		}
	}
}

// TestClusterFailoverRefusesBuckets: a round of --cluster-failover kills the master of the product's own slot and reads
// the product's own stock key; a redis-decr+kK product's stock is in its
// buckets, on K slots. On a real run its row said "the stock counter is on
// that master", never waited for a sale ("0 of 1 times") and reported
// "drift +0 at the peak, not repaired: -3 at the end". The flags refuse
// the pair; sql-atomic's buckets, in the database, stay allowed.
func TestClusterFailoverRefusesBuckets(t *testing.T) {
	if _, err := parseFlags([]string{"--cluster-failover", "--strategies", "redis-decr+k3"}, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "cluster-failover: not with a redis-decr+kK row") {
		t.Errorf("--cluster-failover with redis-decr+k3: %v, want refused", err)
	}
	if _, err := parseFlags([]string{"--cluster-failover", "--strategies", "redis-decr,sql-atomic+k3"}, io.Discard); err != nil {
		t.Errorf("--cluster-failover with redis-decr and sql-atomic+k3: %v, want accepted", err)
	}
}
