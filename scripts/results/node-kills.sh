#!/usr/bin/env bash
# Writes docs/results/node-kills.md: redlock, etcd and zookeeper with lock
# servers stopped halfway through their attack, first a minority (2 of 5
# Redis masters, 1 of 3 etcd members, 1 of 3 ZooKeeper members), then a
# majority (3 of 5, 2 of 3, 2 of 3). 500 units, so that the sale is still on
# when the nodes go. The zookeeper row needs java and Debian's zookeeper
# (the load generator starts the ensemble). About a minute.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin node-kills "Lock servers down: a minority, then a majority"
results_run --strategies redlock,etcd,zookeeper --redlock-kill 2 --etcd-kill 1 --zookeeper-kill 1 --stock 500
results_run --strategies redlock,etcd,zookeeper --redlock-kill 3 --etcd-kill 2 --zookeeper-kill 2 --stock 500
results_end
