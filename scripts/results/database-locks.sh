#!/usr/bin/env bash
# Writes docs/results/database-locks.md (database-locks-real.md on real
# servers): the database's own locks, sql-for-update and sql-version, beside
# sql-atomic, in the default sale and under the late commit; swept in the
# open model on a stock that never sells out (goodput and p99 against the
# offered rate); and BenchmarkRowLockPool and BenchmarkVersionCrowd, in one
# shop: another product's orders beside a crowd holding the pool, and
# sql-version's tries, wasted work and conflicts per order as the crowd
# grows, the medians of COUNT passes (default 3) by benchstat.
#
# The benchmarks run on the backends the file is for: embedded, or the real
# servers as loadgen's variables name them (LOADGEN_MYSQL_DSN, LOADGEN_REDIS,
# LOADGEN_ETCD), passed on as the tests' (FLASHSALE_TEST_*). Needs benchstat
# (go install golang.org/x/perf/cmd/benchstat@latest). About five minutes on
# a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v benchstat >/dev/null || PATH=$PATH:$(go env GOPATH)/bin
command -v benchstat >/dev/null || { echo "needs benchstat: go install golang.org/x/perf/cmd/benchstat@latest" >&2; exit 1; }
if [ -n "${LOADGEN_MYSQL_DSN:-}" ]; then
	bench=real
	export FLASHSALE_TEST_MYSQL_DSN=$LOADGEN_MYSQL_DSN FLASHSALE_TEST_REDIS_ADDRS=${LOADGEN_REDIS:?set LOADGEN_REDIS}
	if [ -n "${LOADGEN_ETCD:-}" ]; then export FLASHSALE_TEST_ETCD_ENDPOINTS=$LOADGEN_ETCD; fi
else
	bench=embedded
	unset FLASHSALE_TEST_MYSQL_DSN FLASHSALE_TEST_REDIS_ADDRS FLASHSALE_TEST_ETCD_ENDPOINTS
fi
results_begin database-locks "The database's own locks: sql-for-update and sql-version"
results_run --strategies sql-for-update,sql-version,sql-atomic
results_run --strategies sql-for-update,sql-version,sql-atomic --late-commit 300ms
results_run --strategies sql-version,sql-for-update,sql-atomic --sweep 100,200,400,800 --users 0 --stock 100000 \
	--duration 3s --stall-rate 0
for b in RowLockPool VersionCrowd; do
	results_cmd "go test -run '^\$' -bench 'Benchmark$b/$bench/' -count ${COUNT:-3} ./internal/order | benchstat -"
done
results_end
