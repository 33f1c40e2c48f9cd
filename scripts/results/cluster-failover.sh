#!/usr/bin/env bash
# Writes docs/results/cluster-failover.md: the single-node locks, stock and
# queue on a Redis Cluster of the load generator's own, the master of the
# product's slot killed right after it granted a lock its held replica
# never got (three times per row), the cluster promoting the replica. Needs
# redis-server and redis-cli on the PATH; the database is embedded or
# LOADGEN_MYSQL_DSN. About two and a half minutes on a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RESULTS_ALSO="a Redis Cluster of six redis-server nodes, started by the load generator"
results_begin cluster-failover "A failover on a Redis Cluster: the replica never heard of the lock"
results_run --cluster-failover
results_end
