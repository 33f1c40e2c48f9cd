package main

import (
	"io"
	"testing"
)

// TestReviewClusterWithSentinelFailover, from the cold review of
// --redis-cluster: --failover starts a Sentinel-managed master for the
// single-node roles, which a Redis Cluster (--redis-cluster, or
// --cluster-failover's own) takes too; the two cannot both hold them, so
// the flags must refuse the pair before anything starts, as they refuse
// --redis-cluster with --redis-sentinel.
func TestReviewClusterWithSentinelFailover(t *testing.T) {
	for _, args := range [][]string{
		{"--failover", "--redis-cluster", "127.0.0.1:7301"},
		{"--failover", "--cluster-failover"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) = nil, want a usage error: both name the Redis of the single-node roles", args)
		}
	}
}
