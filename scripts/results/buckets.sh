#!/usr/bin/env bash
# Writes docs/results/buckets-real.md (buckets.md on the embedded
# backends): sql-atomic with its stock in one row, then in 4 and 16
# buckets (rows sql-atomic, sql-atomic+k4, sql-atomic+k16), swept in the
# open model on a stock no rate sells out, so that each row's knee shows
# what its hot rows serve; then the default sale of the same three rows,
# which sells out, with --fail-on-unsafe: exact per bucket and in total,
# one order per buyer, and nobody told sold out while a unit was left
# (the audit's timestamp check). Meant for the real servers (the hot row
# is InnoDB's row lock). About three minutes on a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rows=sql-atomic,sql-atomic+k4,sql-atomic+k16
results_begin buckets "A hot product's stock in buckets: sql-atomic over 1, 4 and 16 rows"
results_run --strategies "$rows" --sweep "${RATES:-400,800,1200,1600,2400,3200}" --users 0 --stock 1000000 \
	--duration 3s --stall-rate 0
results_run --strategies "$rows" --fail-on-unsafe
results_end
