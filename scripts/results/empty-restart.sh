#!/usr/bin/env bash
# Writes docs/results/empty-restart.md: three of redlock's five Redis nodes
# restarted empty while a holder holds the lock, at once and then after a
# delay of one TTL, beside fenced (one node, whose counter goes back); three
# runs of each row (--count 3: medians, min–max).
# About a minute.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin empty-restart "A node that restarts empty"
results_run --strategies redlock,fenced --redis-restart 3 --count 3
results_run --strategies redlock,fenced --redis-restart 3 --restart-delay 1s --count 3
results_end
