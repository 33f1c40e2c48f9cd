#!/usr/bin/env bash
# Writes docs/results/cluster.md (cluster-real.md with real servers): every
# strategy with lua, naive, fenced, the dedupe lock, redis-decr and
# redis-queue on a Redis Cluster (three masters, a replica each), redlock on
# its own five nodes: the default sale, then --crash 2. The cluster is
# LOADGEN_REDIS_CLUSTER's (loadgen reads it as --redis-cluster), or one this
# script starts (redis-server and redis-cli on the PATH) and stops by pid at
# the end. About three minutes on a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_cluster
results_begin cluster "The single-node roles on a Redis Cluster"
results_run
results_run --crash 2
results_end
