#!/usr/bin/env bash
# Writes docs/results/failover.md: the single-node locks and stock on a
# Sentinel-managed master whose replica is held behind, the master killed
# right after it granted a lock (three times per row). Needs redis-server and
# redis-sentinel on the PATH; the database is embedded or LOADGEN_MYSQL_DSN.
# About two minutes on a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RESULTS_ALSO="a redis-server master, its replica and three Sentinels (redis-sentinel), started by the load generator"
results_begin failover "A failover: the replica never heard of the lock"
results_run --failover
results_end
