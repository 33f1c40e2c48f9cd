#!/usr/bin/env bash
# Writes docs/results/decr-buckets.md (decr-buckets-real.md with real
# servers): redis-decr on a Redis Cluster (three masters, a replica each)
# with its stock in one key, then in 3 buckets under three hash tags, one
# per master (rows redis-decr, redis-decr+k3), swept in the open model on
# a stock no rate sells out, so that each row's knee shows what limits it;
# then the default sale of both, which sells out, with --fail-on-unsafe:
# exact per bucket and in total, one order per buyer, nobody told sold out
# while a unit was left (the audit's timestamp check). The cluster is
# LOADGEN_REDIS_CLUSTER's, or one this script starts (redis-server and
# redis-cli on the PATH) and stops by pid at the end. About two minutes on
# a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_cluster
# share: the scripts (EVALSHA and EVAL calls) each master ran since the
# last share, from INFO commandstats: where a row's load landed. Other
# clients of the cluster count too.
share() {
	local a role n was
	for a in ${LOADGEN_REDIS_CLUSTER//,/ }; do
		role=$(redis-cli -h "${a%:*}" -p "${a##*:}" role | head -n 1)
		[ "$role" = master ] || continue
		n=$(redis-cli -h "${a%:*}" -p "${a##*:}" info commandstats |
			sed -n 's/^cmdstat_eval\(sha\)\{0,1\}:calls=\([0-9]*\),.*/\2/p' | awk '{s += $1} END {print s + 0}')
		was=$(sed -n "s/^$a //p" "$results_work/calls" 2>/dev/null || true)
		if [ -z "${1:-}" ]; then echo "master $a: $((n - ${was:-0})) scripts"; fi
		echo "$a $n" >>"$results_work/calls.new"
	done
	mv "$results_work/calls.new" "$results_work/calls"
}
export -f share
export results_work LOADGEN_REDIS_CLUSTER
results_begin decr-buckets "A hot product's stock in buckets: redis-decr over 1 and 3 keys of a Redis Cluster"
sweep=(--sweep "${RATES:-1000,2000,3000,4000,5000}" --users 0 --stock 1000000 --duration 3s --stall-rate 0)
share quiet
results_run --strategies redis-decr "${sweep[@]}"
results_cmd share
results_run --strategies redis-decr+k3 "${sweep[@]}"
results_cmd share
results_run --strategies redis-decr,redis-decr+k3 --fail-on-unsafe
results_end
