#!/usr/bin/env bash
# Writes docs/results/network-real.md (network.md on the embedded
# backends): every row swept in the open model at --rtt 2ms, each row's
# ceiling at that RTT (the round trips it holds its product for) beside its
# measured peak and the machine's CPU share; then the hot row's group
# (sql-atomic, sql-one-trip, sql-atomic over 4 and 16 rows) swept again on
# loopback (--rtt 0), where the cores, not the round trips, set the peak.
# Meant for the real servers (the hot row is InnoDB's row lock); about
# fourteen minutes on a 2-core machine. RATES overrides the 2 ms sweep's
# rates.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rows=off,naive,lua,redlock,fenced,etcd,zookeeper,sql-for-update,sql-version,sql-atomic,sql-one-trip
rows+=,sql-atomic+k4,sql-atomic+k16,redis-decr,redis-queue,fenced+batch
hot=sql-atomic,sql-one-trip,sql-atomic+k4,sql-atomic+k16
results_begin network "A sale over a network: each row's ceiling at 2 ms, and the hot row on loopback"
results_run --modes "$rows" --sweep "${RATES:-50,100,200,400,800,1600,3200,6400}" --rtt 2ms
results_run --modes "$hot" --sweep 400,800,1600,3200,6400 --rtt 0
results_end
