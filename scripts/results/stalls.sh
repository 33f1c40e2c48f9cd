#!/usr/bin/env bash
# Writes docs/results/stalls.md: what the stalls do to a lock and to a
# lock-free row, and what a longer TTL does for naive. lua and sql-atomic
# with 30% of critical sections stalled 300 ms (the default is 8%), then
# naive with a 500 ms TTL, longer than every stall. About a minute.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin stalls "Stalls and TTLs"
results_run --strategies lua,sql-atomic --stall-rate 0.3
results_run --strategies naive --lock-ttl 500ms
results_end
