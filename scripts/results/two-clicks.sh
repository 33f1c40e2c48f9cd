#!/usr/bin/env bash
# Writes docs/results/two-clicks.md: up to ten clicks per buyer within a few
# ms, no stalls, more units than buyers (so that every buyer may buy once and
# every refusal is a repeated click), for off (no dedupe lock), lua (the
# dedupe lock), fenced+batch (no dedupe lock: each batch asks the database)
# and the lock-free rows (a unique key; Redis's record of the buyer). About 40 s.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin two-clicks "Repeated clicks by one buyer"
results_run --strategies off,lua,fenced+batch,sql-atomic,redis-decr,redis-queue --users 300 --stock 1000 --clicks 10 --stall-rate 0
results_end
