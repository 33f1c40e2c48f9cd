#!/usr/bin/env bash
# Writes docs/results/bench-place.md: BenchmarkPlace, the order flow of each
# strategy in one process (no HTTP, no door, no simulated work), with 1 buyer,
# 64 buyers in one shop and 64 over three shops, on the real servers: orders/s
# and p99, the medians of COUNT passes (default 3) by benchstat.
#
# Needs the real servers as the tests name them (FLASHSALE_TEST_MYSQL_DSN,
# FLASHSALE_TEST_REDIS_ADDRS, FLASHSALE_TEST_ETCD_ENDPOINTS), or as loadgen
# names them (LOADGEN_MYSQL_DSN, LOADGEN_REDIS, LOADGEN_ETCD), and benchstat
# (go install golang.org/x/perf/cmd/benchstat@latest). FLOWS narrows the
# flows (a regexp, default every one); BENCHTIME is each one's time (1s).
# About COUNT × 2 minutes on a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export FLASHSALE_TEST_MYSQL_DSN=${FLASHSALE_TEST_MYSQL_DSN:-${LOADGEN_MYSQL_DSN:?set FLASHSALE_TEST_MYSQL_DSN or LOADGEN_MYSQL_DSN}}
export FLASHSALE_TEST_REDIS_ADDRS=${FLASHSALE_TEST_REDIS_ADDRS:-${LOADGEN_REDIS:?set FLASHSALE_TEST_REDIS_ADDRS or LOADGEN_REDIS}}
export FLASHSALE_TEST_ETCD_ENDPOINTS=${FLASHSALE_TEST_ETCD_ENDPOINTS:-${LOADGEN_ETCD:-}}
[ -n "$FLASHSALE_TEST_ETCD_ENDPOINTS" ] || unset FLASHSALE_TEST_ETCD_ENDPOINTS
command -v benchstat >/dev/null || PATH=$PATH:$(go env GOPATH)/bin
command -v benchstat >/dev/null || { echo "needs benchstat: go install golang.org/x/perf/cmd/benchstat@latest" >&2; exit 1; }
# The head names the servers as loadgen's variables do; the file is always
# bench-place.md (it runs on real servers only).
LOADGEN_MYSQL_DSN=$FLASHSALE_TEST_MYSQL_DSN LOADGEN_REDIS=$FLASHSALE_TEST_REDIS_ADDRS \
	LOADGEN_ETCD=${FLASHSALE_TEST_ETCD_ENDPOINTS:-} results_begin bench-place "BenchmarkPlace: the order flow in one process"
results_out=docs/results/bench-place.md
results_cmd "go test -run '^\$' -bench 'BenchmarkPlace/real/flow=${FLOWS:-.}/' -benchtime ${BENCHTIME:-1s} -count ${COUNT:-3} ./internal/order | benchstat -col /shops,/buyers -"
results_end
