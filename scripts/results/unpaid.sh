#!/usr/bin/env bash
# Writes docs/results/unpaid.md (unpaid-real.md on real servers): the sale
# with payments. 400 buyers for 40 units with a 2 s pay window, 70% of the
# winners paying within it, the crowd coming for about 5 s, so that the
# units of the orders nobody paid sell again; every safe row. Then every
# payment sent at its deadline (--late-pay); then shops killed twice in
# each row while orders expire (--crash 2); then shop 1's clock half a
# second ahead (--clock-ahead), with the sweep and with the textbook's
# naive expiry (--naive-expiry). About ten minutes on two cores.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin unpaid "The unpaid order"
safe=lua,redlock,fenced,etcd,zookeeper,sql-for-update,sql-version,sql-atomic,sql-one-trip,redis-decr,redis-queue,fenced+batch
sale=(--users 400 --stock 40 --rate 80 --stall-rate 0 --pay-within 2s)
results_run --strategies "$safe" "${sale[@]}" --pay 0.7
results_run --strategies "$safe" "${sale[@]}" --pay 1 --late-pay
results_run --strategies fenced,sql-atomic,sql-one-trip,redis-decr,redis-queue "${sale[@]}" --pay 0.7 --crash 2
results_run --strategies fenced,sql-atomic,sql-for-update "${sale[@]}" --pay 0.7 --clock-ahead 500ms
results_run --strategies fenced,sql-atomic,sql-for-update "${sale[@]}" --pay 0.7 --clock-ahead 500ms --naive-expiry
results_end
