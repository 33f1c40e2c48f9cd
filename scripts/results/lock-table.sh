#!/usr/bin/env bash
# Writes docs/results/lock-table.md: the textbook's lock throughput table
# measured on this machine in one run of cmd/locktable: single Redis (lua),
# Redlock over five nodes, etcd, ZooKeeper and the database's row lock, with
# many independent keys and with one hot key, beside the claimed figures.
#
# Real servers only, on this machine (the command refuses other addresses),
# named as lock-table-servers.sh reads them; a server not named shows as
# skipped in the table. About three minutes with the command's defaults;
# nothing else should use the cores meanwhile (all.sh's LOCK).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. scripts/results/lock-table-servers.sh
results_begin lock-table "The lock throughput table, measured"
go build -o "$results_work/locktable" ./cmd/locktable
locktable_run "$results_work/run.md"
cat "$results_work/run.md" >>"$results_work/out.md"
results_end
