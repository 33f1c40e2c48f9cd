#!/usr/bin/env bash
# Writes docs/results/dlock-bench.md: package dlock's waiting beside the peer
# libraries (internal/dlock/bench): BenchmarkContendedProcs, three processes
# on one key with 3 and 64 goroutines, lua against bsm/redislock and redlock
# against go-redsync, on the real Redis nodes; acquisitions/s, min-share, p99
# wait and CPU per acquisition, the medians of COUNT passes (default 6) by
# benchstat, with dlock's change against each peer (0.85× is -15%).
#
# Needs five real Redis masters, as the tests name them
# (FLASHSALE_TEST_REDIS_ADDRS) or as loadgen does (LOADGEN_REDIS), and
# benchstat (go install golang.org/x/perf/cmd/benchstat@latest). The load
# average before the run is in the file: read the figures with it. About
# COUNT × 45 s on a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export FLASHSALE_TEST_REDIS_ADDRS=${FLASHSALE_TEST_REDIS_ADDRS:-${LOADGEN_REDIS:?set FLASHSALE_TEST_REDIS_ADDRS or LOADGEN_REDIS}}
unset FLASHSALE_BENCH_REDIS_ADDRS
command -v benchstat >/dev/null || PATH=$PATH:$(go env GOPATH)/bin
command -v benchstat >/dev/null || { echo "needs benchstat: go install golang.org/x/perf/cmd/benchstat@latest" >&2; exit 1; }
RESULTS_BACKENDS="real: Redis at $FLASHSALE_TEST_REDIS_ADDRS"
results_begin dlock-bench "dlock's waiting beside redislock and redsync"
results_out=docs/results/dlock-bench.md
out=/tmp/dlock-bench.txt
results_cmd "cat /proc/loadavg"
results_cmd "cd internal/dlock/bench && go test -run '^\$' -bench 'ContendedProcs/mode=(lua|redlock)/' -benchtime 1s -count ${COUNT:-6} . > $out; head -2 $out"
F='.unit:(acq/s OR min-share OR p99-wait-ms OR cpu-sec/op)'
results_cmd "benchstat -filter '/mode:lua $F' -row /g -col '/impl@(redislock dlock)' $out"
results_cmd "benchstat -filter '/mode:redlock $F' -row /g -col '/impl@(redsync dlock)' $out"
results_end
