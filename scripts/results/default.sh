#!/usr/bin/env bash
# Writes docs/results/default.md: the sale of the README, once per strategy,
# with the default crowd (660 buyers, 100 units, 250 clicks/s over three
# shops, 8% of critical sections stalled 300 ms against a 100 ms lock TTL).
# About a minute on a 2-core machine, embedded or real (see lib.sh).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin default "The sale, once per strategy"
results_run
results_end
