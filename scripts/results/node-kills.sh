#!/usr/bin/env bash
# Writes docs/results/node-kills.md: redlock and etcd with lock servers
# stopped halfway through their attack, first a minority (2 of 5 Redis
# masters, 1 of 3 etcd members), then a majority (3 of 5, 2 of 3). 500 units,
# so that the sale is still on when the nodes go. About a minute.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin node-kills "Lock servers down: a minority, then a majority"
results_run --modes redlock,etcd --redlock-kill 2 --etcd-kill 1 --stock 500
results_run --modes redlock,etcd --redlock-kill 3 --etcd-kill 2 --stock 500
results_end
