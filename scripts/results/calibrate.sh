#!/usr/bin/env bash
# Writes docs/results/calibrate.md: the load generator's own ceiling on this
# machine (Vegeta at an unlimited rate against a trivial endpoint in its own
# process), the rate above which a sweep measures the attacker, not the shop.
# About 15 s.
RESULTS_BACKENDS="none: a trivial HTTP endpoint in the load generator's own process"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin calibrate "The load generator's ceiling"
results_cmd "loadgen --calibrate"
results_end
