#!/usr/bin/env bash
# Regenerates every docs/results file, then docs/results/index.md.
#
# On the embedded backends always: default, two-clicks, late-commit,
# database-locks, node-kills, empty-restart, crash, failover (needs
# redis-server and redis-sentinel) and calibrate. With real servers named
# (LOADGEN_MYSQL_DSN, LOADGEN_REDIS, optionally LOADGEN_ETCD), also their
# -real files (late-commit, database-locks, crash), bench-place, dlock-bench,
# overload and overload-profile.
# LOCK, if set, is a file each script takes with flock(1) first, so that no
# other heavy job shares the cores with a measurement.
# index.md says how long each took; run this on a quiet machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
run() {
	echo "==> $*" >&2
	if [ -n "${LOCK:-}" ]; then flock "$LOCK" "$@"; else "$@"; fi
}
embedded=(default two-clicks late-commit database-locks node-kills empty-restart crash failover calibrate)
for s in "${embedded[@]}"; do
	run env -u LOADGEN_MYSQL_DSN -u LOADGEN_REDIS -u LOADGEN_ETCD "./$s.sh"
done
if [ -n "${LOADGEN_MYSQL_DSN:-}" ]; then
	for s in late-commit database-locks crash bench-place dlock-bench overload overload-profile; do
		run "./$s.sh"
	done
fi
./index.sh
