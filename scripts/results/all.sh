#!/usr/bin/env bash
# Regenerates every docs/results file, then docs/results/index.md, then
# docs/live.png (live.sh: the live page at the end of a short sale).
#
# On the embedded backends always: default, two-clicks, late-commit, batch-late-commit, stalls,
# database-locks, node-kills, empty-restart, crash, failover (needs
# redis-server and redis-sentinel), cluster-failover (redis-server and
# redis-cli), catalogue, calibrate and unpaid; with LOADGEN_REDIS_CLUSTER, also
# catalogue-cluster. With real servers named (LOADGEN_MYSQL_DSN,
# LOADGEN_REDIS, optionally LOADGEN_ETCD and LOADGEN_REDIS_CLUSTER), also
# their -real files (late-commit, batch-late-commit, database-locks, buckets, crash, cluster and
# decr-buckets: a cluster of their own without LOADGEN_REDIS_CLUSTER), bench-place, dlock-bench,
# overload, overload-profile, network, one-trip-knee, unpaid, lock-table and lock-table-rtt (which also want
# LOADGEN_ZOOKEEPER, else its ZooKeeper row is skipped).
# LOCK, if set, is a file each script takes with flock(1) first, so that no
# other heavy job shares the cores with a measurement.
# index.md says how long each took; run this on a quiet machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
run() {
	echo "==> $*" >&2
	if [ -n "${LOCK:-}" ]; then flock "$LOCK" "$@"; else "$@"; fi
}
embedded=(default two-clicks late-commit batch-late-commit stalls database-locks node-kills empty-restart crash failover cluster-failover catalogue calibrate unpaid)
for s in "${embedded[@]}"; do
	run env -u LOADGEN_MYSQL_DSN -u LOADGEN_REDIS -u LOADGEN_ETCD -u LOADGEN_REDIS_CLUSTER "./$s.sh"
done
if [ -n "${LOADGEN_MYSQL_DSN:-}" ]; then
	for s in late-commit batch-late-commit database-locks buckets crash bench-place dlock-bench overload overload-profile network one-trip-knee unpaid lock-table lock-table-rtt; do
		run env -u LOADGEN_REDIS_CLUSTER "./$s.sh"
	done
	run ./cluster.sh
	run ./decr-buckets.sh
fi
[ -z "${LOADGEN_REDIS_CLUSTER:-}" ] || run ./catalogue.sh
./index.sh
# Not under the flock: headless Chromium never took the live page's picture
# when flock(1) ran the script (three tries of three, -o too), and always
# did without it. live.sh writes no figures, only docs/live.png.
./live.sh
