#!/usr/bin/env bash
# Writes docs/results/unpaid.md: the sale with payments. 300 buyers for
# 40 units with a 1 s pay window, 70% of the winners paying within it, the
# crowd coming for about 4 s; then every payment sent at its deadline;
# then shop 1's clock half a second ahead (--clock-ahead), with the sweep
# and with the textbook's naive expiry (--naive-expiry). About 80 s.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin unpaid "The unpaid order"
sale=(--users 300 --stock 40 --rate 100 --stall-rate 0 --pay-within 1s)
results_run --modes fenced,sql-atomic,sql-for-update,redis-decr "${sale[@]}" --pay 0.7
results_run --modes fenced,sql-atomic,sql-for-update "${sale[@]}" --pay 1 --late-pay
results_run --modes fenced,sql-atomic,sql-for-update "${sale[@]}" --pay 0.7 --clock-ahead 500ms
results_run --modes fenced,sql-atomic,sql-for-update "${sale[@]}" --pay 0.7 --clock-ahead 500ms --naive-expiry
results_end
