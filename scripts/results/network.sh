#!/usr/bin/env bash
# Writes docs/results/network-real.md (network.md on the embedded
# backends): the sale at --rtt 2ms, in the open model. First the rows that
# hold their product for several round trips (the locks, read-then-write),
# each row's ceiling at that RTT beside its peak, the hold the shops
# measured and the machine's CPU share. Then the rows that hold it for one
# round trip or none, side by side, three runs of each point (the median):
# sql-atomic, its buckets, the one-round-trip row, redis-decr, fenced+batch
# and redis-queue, past their knees. Then sixteen buckets with a wider door
# (--max-in-flight 32), and the hot row's group on loopback (--rtt 0), where
# the cores, not the round trips, set the peak. Meant for the real servers
# (the hot row is InnoDB's row lock); about twenty minutes on two cores.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
held=off,naive,lua,redlock,fenced,etcd,zookeeper,sql-for-update,sql-version
fast=sql-atomic,sql-one-trip,sql-atomic+k4,sql-atomic+k16,redis-decr,fenced+batch,redis-queue
hot=sql-atomic,sql-one-trip,sql-atomic+k4,sql-atomic+k16
results_begin network "A sale over a network: each row's ceiling at 2 ms, what lifts it, and the hot row on loopback"
results_run --strategies "$held" --sweep 25,50,100,200,400,800,1600 --rtt 2ms
results_run --strategies "$fast" --sweep 400,800,1600,3200,6400 --rtt 2ms --count 3
results_run --strategies sql-atomic+k16 --sweep 1600,3200,6400 --rtt 2ms --max-in-flight 32
results_run --strategies "$hot" --sweep 400,800,1600,3200,6400 --rtt 0
results_end
