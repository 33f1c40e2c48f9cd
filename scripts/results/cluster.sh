#!/usr/bin/env bash
# Writes docs/results/cluster.md (cluster-real.md with real servers): every
# strategy with lua, naive, fenced, the dedupe lock, redis-decr and
# redis-queue on a Redis Cluster (three masters, a replica each), redlock on
# its own five nodes: the default sale, then --crash 2. The cluster is
# LOADGEN_REDIS_CLUSTER's (loadgen reads it as --redis-cluster), or one this
# script starts (redis-server and redis-cli on the PATH) and stops by pid at
# the end. About three minutes on a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cluster_pids=()
cluster_dir=
stop_cluster() {
	for pid in "${cluster_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${cluster_pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	done
	[ -z "$cluster_dir" ] || rm -rf "$cluster_dir"
	rm -rf "$results_work"
}
trap stop_cluster EXIT
if [ -z "${LOADGEN_REDIS_CLUSTER:-}" ]; then
	cluster_dir=$(mktemp -d)
	out=$(go run ./internal/redisproc/rediscluster -dir "$cluster_dir")
	LOADGEN_REDIS_CLUSTER=$(sed -n 's/^REDIS_CLUSTER=//p' <<<"$out")
	IFS=, read -r -a cluster_pids <<<"$(sed -n 's/^REDIS_CLUSTER_PIDS=//p' <<<"$out")"
fi
export LOADGEN_REDIS_CLUSTER
results_begin cluster "The single-node roles on a Redis Cluster"
results_run
results_run --crash 2
results_end
