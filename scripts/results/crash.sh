#!/usr/bin/env bash
# Writes docs/results/crash.md: every shop process SIGKILLed twice per attack
# and started again, the rows that must survive it (--crash's own: fenced,
# sql-atomic, sql-one-trip, redis-decr, redis-queue, fenced+batch; 600
# units). About 40 s.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin crash "A shop killed mid-sale"
results_run --crash 2
results_end
